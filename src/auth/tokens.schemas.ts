import { z } from 'zod';
import { name } from '../http/validate';
import { ROLES } from './roles';
import { id, timestamp } from '../openapi/common';

export const createTokenBody = z
  .object({
    name: name(100),
    role: z.enum(ROLES),
    expires_in_days: z.number().int().min(1).max(3650).optional().describe('The token stops working this many days from now (default: never)'),
  })
  .strict();
export const createTeamBody = z.object({ name: name(200) }).strict();

export const tokenResponse = z.object({
  id: id(),
  name: z.string(),
  role: z.enum(ROLES),
  created_at: timestamp(),
  revoked_at: timestamp().nullable(),
  expires_at: timestamp().nullable().describe('When the token stops working (null: never)'),
  last_used_at: timestamp().nullable().describe('The minute of the token\'s last use (null: never used); recorded at most once a minute'),
});

export const createdTokenResponse = tokenResponse.extend({
  token: z.string().describe('The secret, shown in this response only'),
});

export const createdTeamResponse = z.object({
  team: z.object({ id: id(), name: z.string() }),
  token: z.string().describe('An admin token of the new team, shown in this response only'),
});

export const sessionResponse = z.object({
  team: z.object({ id: id(), name: z.string() }),
  role: z.enum(ROLES),
  token: z.object({ id: id(), name: z.string() }),
});
