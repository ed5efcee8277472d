import { z } from 'zod';
import { id, timestamp } from '../openapi/common';
import { EVENT_TYPES } from '../events/event-types';

const webhookUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .refine((text) => URL.canParse(text), 'must be an absolute URL, e.g. https://example.com/hooks/finance')
  .refine((text) => !URL.canParse(text) || ['http:', 'https:'].includes(new URL(text).protocol), 'must be an http or https URL');

const eventTypes = z
  .array(z.enum([...EVENT_TYPES, '*'], { error: `must be one of ${EVENT_TYPES.join(', ')}, or "*" alone for every type` }))
  .min(1, 'must name at least one event type, or "*"')
  .refine((types) => new Set(types).size === types.length, 'must not repeat a type')
  .refine((types) => !types.includes('*') || types.length === 1, '"*" stands alone: it already means every type');

export const createWebhookBody = z
  .object({
    url: webhookUrl,
    event_types: eventTypes,
    description: z.string().max(500, 'must be at most 500 characters').nullable().optional(),
  })
  .strict();

export const webhookResponse = z.object({
  id: id(),
  url: z.string(),
  event_types: z.array(z.string()),
  description: z.string().nullable(),
  created_at: timestamp(),
});

export const createdWebhookResponse = webhookResponse.extend({
  secret: z.string().describe('whsec_ + base64 key for verifying signatures: shown in this response only'),
});

export const deliveryAttemptResponse = z.object({
  id: id(),
  delivery_id: id(),
  event_id: id().describe('The event delivered, also the webhook-id header'),
  event_type: z.enum(EVENT_TYPES),
  status_code: z.number().int().nullable().describe('The receiver\'s HTTP status (null: no answer, see error)'),
  error: z.string().nullable().describe('Why no answer came (timeout, refused address, connection error)'),
  duration_ms: z.number().int(),
  attempted_at: timestamp(),
  next_attempt_at: timestamp().nullable().describe('When the event is tried again (null: delivered, or given up)'),
  outcome: z.enum(['delivered', 'retrying', 'failed']),
});
