/**
 * Every type of event in a team's feed, one declaration: the feed's `type` filter, the
 * webhooks' `event_types` and the OpenAPI document read it.
 */
export const EVENT_TYPES = [
  'time_log.created',
  'time_log.deleted',
  'task.fixed_cost.changed',
  'task.changed',
  'rate_card.changed',
  'member_rates.changed',
  'member_role.changed',
  'project.changed',
  'budget.threshold_crossed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
