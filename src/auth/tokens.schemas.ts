import { z } from 'zod';
import { name } from '../http/validate';
import { ROLES } from './roles';

export const createTokenBody = z.object({ name: name(100), role: z.enum(ROLES) }).strict();
export const createTeamBody = z.object({ name: name(200) }).strict();
