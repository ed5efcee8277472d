import { z } from 'zod';
import { name } from '../http/validate';
import { id, timestamp } from '../openapi/common';

export const createJobRoleBody = z.object({ name: name(100) }).strict();

export const jobRoleResponse = z.object({ id: id(), name: z.string(), created_at: timestamp() });
