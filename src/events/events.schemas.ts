import { z } from 'zod';
import { MAX_PAGE, pageLimit } from '../http/paging';
import { id, timestamp } from '../openapi/common';
import { EVENT_TYPES } from './event-types';

export const eventsQuery = z
  .object({
    after: z
      .string()
      .regex(/^\d{1,15}$/, 'must be a non-negative integer (the seq of the last event read)')
      .optional()
      .describe('Only events with a greater seq: the next_after of the previous page (default 0)'),
    limit: pageLimit.transform(Number).optional().describe(`Events per page, 1 to ${MAX_PAGE} (default 100)`),
    type: z.enum(EVENT_TYPES).optional().describe('Only events of this type'),
  })
  .strict();

export const eventResponse = z.object({
  id: id(),
  seq: z.number().int().describe('Position in the team\'s feed: only grows'),
  type: z.enum(EVENT_TYPES),
  occurred_at: timestamp(),
  data: z.record(z.string(), z.unknown()).describe('What changed; its fields depend on the type (docs/webhooks.md)'),
});

export const eventsResponse = z.object({
  events: z.array(eventResponse),
  next_after: z.number().int().describe('Pass as `after` for the next page (the seq of the last event, else the `after` given)'),
});
