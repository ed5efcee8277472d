import { useEffect, useRef, useState } from 'react';
import type { Api, Decimal, FeedEvent, ProjectMember } from './api';
import type { FeedFollower } from './feed';
import { formatHours, formatMoney, formatTime } from './format';

/** Events shown: the project's latest. */
const SHOWN = 10;

type Props = {
  api: Api;
  feed: FeedFollower;
  projectId: string;
  currency: string;
  /** Names of the tasks the screen knows (the list's rows), for the summaries. */
  taskNames: ReadonlyMap<string, string>;
  revision: number;
  onError: (err: unknown) => void;
};

/** The project's latest events from the team's feed, newest first; read again whenever the figures are. */
export function EventsSection({ api, feed, projectId, currency, taskNames, revision, onError }: Props) {
  const [events, setEvents] = useState<FeedEvent[] | null>(null);
  const [members, setMembers] = useState<ReadonlyMap<string, string>>(new Map());
  /** Names of the tasks the list does not show (subtasks), read once each; null: unknown (archived, say). */
  const [otherTasks, setOtherTasks] = useState<ReadonlyMap<string, string | null>>(new Map());
  const asked = useRef(new Set<string>());

  useEffect(() => {
    let live = true;
    api
      .json<ProjectMember[]>(`/projects/${projectId}/members`)
      .then((reply) => live && setMembers(new Map(reply.body.map((m) => [m.team_member_id, m.name]))))
      .catch(() => undefined); // Names only make the summaries friendlier; without them the events still show.
    return () => {
      live = false;
    };
  }, [api, projectId]);

  useEffect(() => {
    let live = true;
    feed
      .latestOf(projectId)
      .then((latest) => live && setEvents(latest.slice(0, SHOWN)))
      .catch((err: unknown) => live && onError(err));
    return () => {
      live = false;
    };
  }, [feed, projectId, revision, onError]);

  useEffect(() => {
    const unknown = [...new Set((events ?? []).map((e) => e.data.task_id))].filter(
      (id): id is string => typeof id === 'string' && !taskNames.has(id) && !asked.current.has(id),
    );
    for (const id of unknown) {
      asked.current.add(id);
      api
        .json<{ name: string }>(`/tasks/${id}`)
        .then((reply) => setOtherTasks((known) => new Map(known).set(id, reply.body.name)))
        .catch(() => setOtherTasks((known) => new Map(known).set(id, null)));
    }
  }, [api, events, taskNames]);

  const names: Names = { task: (id) => (typeof id === 'string' && (taskNames.get(id) ?? otherTasks.get(id))) || 'a task', member: (id) => (typeof id === 'string' && members.get(id)) || 'a member', currency };

  return (
    <section className="events" aria-labelledby="events-title">
      <h2 id="events-title">Latest events</h2>
      {!events && <p role="status">Loading the events…</p>}
      {events && events.length === 0 && <p className="empty">No events for this project yet.</p>}
      {events && events.length > 0 && (
        <ol className="event-list">
          {events.map((event) => (
            <li key={event.id} className={event.type === 'budget.threshold_crossed' ? 'event crossing' : 'event'} data-type={event.type} data-seq={event.seq}>
              <span className="event-type">{event.type}</span>
              <time dateTime={event.occurred_at}>{formatTime(event.occurred_at)}</time>
              <span className="event-summary">{summaryOf(event, names)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

type Names = { task: (id: unknown) => string; member: (id: unknown) => string; currency: string };

const asDecimal = (value: unknown): Decimal => (typeof value === 'number' || typeof value === 'string' ? value : 0);
const hoursOf = (seconds: unknown) => formatHours(typeof seconds === 'number' ? seconds / 3600 : 0);
const FIELD_WORDS: Record<string, string> = { estimated_hours: 'estimate', assignee_ids: 'assignees', parent_task_id: 'parent', billable: 'billable', archived: 'archived' };
const fields = (changed: unknown) => (Array.isArray(changed) ? changed.map((f) => FIELD_WORDS[String(f)] ?? String(f)).join(', ') : '');

/** One line a person reads: what changed, with names where the screen knows them (docs/webhooks.md lists each type's data). */
function summaryOf(event: FeedEvent, names: Names): string {
  const d = event.data;
  const money = (value: unknown) => formatMoney(asDecimal(value), names.currency);
  switch (event.type) {
    case 'time_log.created':
      return `${hoursOf(d.seconds)} h logged by ${names.member(d.team_member_id)} on ${names.task(d.task_id)}`;
    case 'time_log.deleted':
      return `${hoursOf(d.seconds)} h of ${names.member(d.team_member_id)} on ${names.task(d.task_id)} deleted`;
    case 'task.fixed_cost.changed':
      return `Fixed cost of ${names.task(d.task_id)}: ${money(d.old_value)} → ${money(d.new_value)}`;
    case 'task.changed':
      if (d.action === 'created') return `Task ${names.task(d.task_id)} created`;
      if (d.action === 'archived') return `Task ${names.task(d.task_id)} archived${typeof d.archived_tasks === 'number' && d.archived_tasks > 1 ? ` with its subtasks (${d.archived_tasks} tasks)` : ''}`;
      return `Task ${names.task(d.task_id)} changed: ${fields(d.changed)}`;
    case 'rate_card.changed':
      return `Rate card changed from ${String(d.effective_from)}`;
    case 'member_rates.changed': {
      const rate = (value: unknown) => (value === null || value === undefined ? 'the role\'s' : money(value));
      return `Own rates of ${names.member(d.team_member_id)} from ${String(d.effective_from)}: cost ${rate(d.hourly_rate)}, bill ${rate(d.bill_rate)}`;
    }
    case 'member_role.changed':
      if (d.removed === true) return `${names.member(d.team_member_id)} removed from the project`;
      return `${names.member(d.team_member_id)} ${d.added === true ? 'added' : 'given another role'} from ${String(d.effective_from)}`;
    case 'project.changed':
      return d.action === 'created' ? 'Project created' : `Project changed: ${fields(d.changed)}`;
    case 'budget.threshold_crossed': {
      const period = d.period as { kind?: string; from?: string | null } | undefined;
      const month = period?.kind === 'month' && typeof period.from === 'string' ? ` in ${period.from.slice(0, 7)}` : '';
      const amount = (value: unknown) => (d.kind === 'hours' ? `${formatHours(asDecimal(value))} h` : money(value));
      return `${d.kind === 'hours' ? 'Hours' : 'Money'} budget: ${String(d.percent)}% reached${month} (${amount(d.spent)} of ${amount(d.budget)})`;
    }
    default:
      return event.type;
  }
}
