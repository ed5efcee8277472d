import { z } from 'zod';
import { decimalNumber, name, uuid } from '../http/validate';
import { exactDecimal, id, timestamp } from '../openapi/common';

export const MAX_AMOUNT = 1_000_000_000;

const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code in capitals, e.g. USD');

// Decimals are checked against the project's currency by the service.
const amount = () => decimalNumber({ min: 0, max: MAX_AMOUNT });

export const createProjectBody = z
  .object({ name: name(200), currency: currency.optional(), budget: amount().nullable().optional() })
  .strict();

export const updateProjectBody = z
  .object({ name: name(200).optional(), currency: currency.optional(), budget: amount().nullable().optional() })
  .strict();

export const rateCardBody = z
  .object({
    roles: z
      .array(z.object({ job_role_id: uuid(), hourly_rate: amount() }).strict())
      .max(1000, 'must have at most 1000 entries'),
  })
  .strict();

export const projectMemberBody = z.object({ job_role_id: uuid().nullable() }).strict();

export const projectResponse = z.object({
  id: id(),
  name: z.string(),
  currency: z.string(),
  budget: exactDecimal('Budget in the project currency').nullable(),
  created_at: timestamp(),
  updated_at: timestamp(),
});

export const rateCardResponse = z.object({
  project_id: id(),
  currency: z.string(),
  roles: z.array(z.object({ job_role_id: id(), job_role_name: z.string(), hourly_rate: exactDecimal('Rate per hour') })),
});

export const projectMemberResponse = z.object({
  project_id: id(),
  team_member_id: id(),
  name: z.string(),
  job_role_id: id().nullable(),
  job_role_name: z.string().nullable(),
});
