import { z } from 'zod';
import { name } from '../http/validate';
import { ROLES } from './roles';
import { id, timestamp } from '../openapi/common';

export const createTokenBody = z.object({ name: name(100), role: z.enum(ROLES) }).strict();
export const createTeamBody = z.object({ name: name(200) }).strict();

export const tokenResponse = z.object({
  id: id(),
  name: z.string(),
  role: z.enum(ROLES),
  created_at: timestamp(),
  revoked_at: timestamp().nullable(),
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
