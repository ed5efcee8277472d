import { z } from 'zod';
import { name } from '../http/validate';

export const createJobRoleBody = z.object({ name: name(100) }).strict();
