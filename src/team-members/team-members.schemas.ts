import { z } from 'zod';
import { name } from '../http/validate';
import { id, timestamp } from '../openapi/common';

const email = z.email('must be an email address').max(320);
const avatarUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
  .max(2000, 'must be at most 2000 characters');

export const createTeamMemberBody = z
  .object({ name: name(200), email: email.nullable().optional(), avatar_url: avatarUrl.nullable().optional() })
  .strict();

export const updateTeamMemberBody = z
  .object({ name: name(200).optional(), email: email.nullable().optional(), avatar_url: avatarUrl.nullable().optional() })
  .strict();

export const teamMemberResponse = z.object({
  id: id(),
  name: z.string(),
  email: z.string().nullable(),
  avatar_url: z.string().nullable(),
  created_at: timestamp(),
  updated_at: timestamp(),
});
