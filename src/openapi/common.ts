import { z } from 'zod';

/* Shapes shared by the response schemas of several features (the OpenAPI document only). */

export const id = () => z.string().uuid().describe('UUID');
export const timestamp = () => z.string().datetime({ offset: true }).describe('ISO 8601 timestamp');
/** An exact decimal written as a JSON number, already rounded as the contract says. */
export const exactDecimal = (description: string) => z.number().describe(description);

export const errorEnvelope = z.object({
  success: z.literal(false),
  error: z.object({
    code: z.string().describe('Stable machine-readable code, e.g. VALIDATION_ERROR, TASK_NOT_FOUND'),
    message: z.string().describe('A human sentence'),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

export const success = <T extends z.ZodType>(body: T) => z.object({ success: z.literal(true), body });
