import {
  ColumnDef,
  ExpandedState,
  Row,
  SortingState,
  flexRender,
  getCoreRowModel,
  getExpandedRowModel,
  getSortedRowModel,
  useReactTable,
} from '@tanstack/react-table';
import { FormEvent, useEffect, useId, useMemo, useRef, useState } from 'react';
import { Api, ApiError, BillableFilter, Breakdown, Decimal, Group, GroupBy, ListTask, Sums, TaskList, explain, listQuery } from './api';
import { formatHours, formatMoney, isNegative, toNumber } from './format';
import { ratioPercent } from './ratio';

type Line = ({ kind: 'group'; group: Group } | { kind: 'task'; task: ListTask }) & { sub: Line[] };

const sumsOf = (line: Line): Sums => (line.kind === 'group' ? line.group : line.task);

type Props = {
  api: Api;
  list: TaskList;
  filter: BillableFilter;
  groupBy: GroupBy;
  revision: number;
  canEdit: boolean;
  loading: boolean;
  /** Show the revenue and margin columns (the service has them and the toggle is on). */
  showRevenue: boolean;
  onOpen: (taskId: string, withSubtasks: boolean) => void;
  onSaved: () => void;
  onError: (err: unknown) => void;
};

type FigureKey = Exclude<keyof Sums, 'has_missing_rates'>;
type FigureColumn = { key: FigureKey; header: string; kind: 'hours' | 'money' };

const FIGURES: FigureColumn[] = [
  { key: 'estimated_hours', header: 'Est. hours', kind: 'hours' },
  { key: 'logged_hours', header: 'Logged hours', kind: 'hours' },
  { key: 'estimated_labor_cost', header: 'Est. labor cost', kind: 'money' },
  { key: 'actual_labor_cost', header: 'Actual labor cost', kind: 'money' },
  { key: 'fixed_cost', header: 'Fixed cost', kind: 'money' },
  { key: 'total_estimated_cost', header: 'Total est. cost', kind: 'money' },
  { key: 'total_actual_cost', header: 'Total actual cost', kind: 'money' },
  { key: 'variance', header: 'Variance', kind: 'money' },
];

/** Revenue and margin (docs/finance-rules.md), after the costs; shown by the toggle. */
const REVENUE_FIGURES: FigureColumn[] = [
  { key: 'estimated_revenue', header: 'Est. revenue', kind: 'money' },
  { key: 'actual_revenue', header: 'Actual revenue', kind: 'money' },
  { key: 'estimated_margin', header: 'Est. margin', kind: 'money' },
  { key: 'actual_margin', header: 'Actual margin', kind: 'money' },
];

/** A figure as shown: hours or money; a figure the service did not send shows a dash. */
function shownFigure(figure: FigureColumn, value: Decimal | undefined, currency: string): string {
  if (value === undefined) return '—';
  return figure.kind === 'hours' ? formatHours(value) : formatMoney(value, currency);
}

/**
 * The project's task list: every figure exactly as the service computed it (groups and totals
 * included), sorted and expanded by TanStack Table. Subtasks are fetched when a parent is expanded.
 */
export function TaskTable({ api, list, filter, groupBy, revision, canEdit, loading, showRevenue, onOpen, onSaved, onError }: Props) {
  const currency = list.project.currency;
  const figures = useMemo(() => (showRevenue ? [...FIGURES, ...REVENUE_FIGURES] : FIGURES), [showRevenue]);
  const [children, setChildren] = useState<Record<string, ListTask[]>>({});
  const [pending, setPending] = useState<Record<string, boolean>>({});
  const [sorting, setSorting] = useState<SortingState>([]);
  const [expanded, setExpanded] = useState<ExpandedState>({});
  const loadedRevision = useRef(revision);

  // Groups open when they first appear; a group the user collapsed stays collapsed across reloads.
  useEffect(() => {
    const groupIds = (list.groups ?? []).map((g) => `group:${g.group_name}`);
    setExpanded((prev) => {
      if (prev === true) return prev;
      const added = groupIds.filter((id) => !(id in prev));
      return added.length ? { ...prev, ...Object.fromEntries(added.map((id) => [id, true])) } : prev;
    });
  }, [list.groups]);

  const loadChildren = async (parentId: string) => {
    setPending((p) => ({ ...p, [parentId]: true }));
    try {
      const reply = await api.json<TaskList>(`/project-finance/project/${list.project.id}/tasks?${listQuery(filter, '', parentId)}`);
      setChildren((c) => ({ ...c, [parentId]: reply.body.tasks }));
    } catch (err) {
      onError(err);
    } finally {
      setPending((p) => ({ ...p, [parentId]: false }));
    }
  };

  // After a save the roll-ups change at every level: fetch the open subtask lists again.
  useEffect(() => {
    if (loadedRevision.current === revision) return;
    loadedRevision.current = revision;
    for (const parentId of Object.keys(children)) void loadChildren(parentId);
  }, [revision]);

  // The tree the table shows: groups, their tasks, and the subtasks fetched so far.
  const data = useMemo<Line[]>(() => {
    const taskLine = (task: ListTask): Line => ({ kind: 'task', task, sub: (children[task.id] ?? []).map(taskLine) });
    if (!list.groups) return list.tasks.map(taskLine);
    const byId = new Map(list.tasks.map((t) => [t.id, t]));
    return list.groups.map((group) => ({
      kind: 'group',
      group,
      sub: group.task_ids.flatMap((id) => {
        const task = byId.get(id);
        return task ? [taskLine(task)] : [];
      }),
    }));
  }, [list, children]);

  const columns = useMemo<ColumnDef<Line>[]>(
    () => [
      {
        id: 'name',
        header: 'Task',
        accessorFn: (line) => (line.kind === 'group' ? line.group.group_name : line.task.name),
        cell: ({ row }) => <NameCell row={row} pending={row.original.kind === 'task' && pending[row.original.task.id] === true} onOpen={onOpen} onExpand={(id) => !children[id] && loadChildren(id)} />,
      },
      {
        id: 'billable',
        header: 'Billable',
        accessorFn: (line) => (line.kind === 'task' ? (line.task.billable ? 1 : 0) : -1),
        cell: ({ row }) => (row.original.kind === 'task' ? (row.original.task.billable ? 'Yes' : 'No') : ''),
      },
      {
        id: 'status',
        header: 'Status',
        accessorFn: (line) => (line.kind === 'task' ? (line.task.status ?? '') : ''),
      },
      ...figures.map<ColumnDef<Line>>((figure) => ({
        id: figure.key,
        header: figure.header,
        meta: { numeric: true },
        accessorFn: (line) => toNumber(sumsOf(line)[figure.key] ?? 0),
        cell: ({ row }) => {
          const line = row.original;
          const value = sumsOf(line)[figure.key];
          if (figure.key === 'fixed_cost' && line.kind === 'task' && canEdit && line.task.sub_tasks_count === 0) {
            return <FixedCostCell api={api} task={line.task} currency={currency} onSaved={onSaved} />;
          }
          if (figure.key === 'variance' && value !== undefined) return <Variance value={value} currency={currency} />;
          return shownFigure(figure, value, currency);
        },
      })),
    ],
    [children, pending, canEdit, currency, figures],
  );

  const table = useReactTable({
    data,
    columns,
    state: { sorting, expanded },
    onSortingChange: setSorting,
    onExpandedChange: setExpanded,
    getRowId: (line) => (line.kind === 'group' ? `group:${line.group.group_name}` : line.task.id),
    getSubRows: (line) => line.sub,
    getRowCanExpand: (row) => row.original.kind === 'group' || row.original.task.sub_tasks_count > 0,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getExpandedRowModel: getExpandedRowModel(),
  });

  if (list.tasks.length === 0) {
    return <p className="empty">No tasks match this filter.</p>;
  }

  return (
    <div className="table-wrap" aria-busy={loading}>
      <table className="tasks">
        <caption>
          {list.project.name}: tasks{groupBy ? ` grouped by ${groupBy}` : ''} ({currency}){loading ? ' — updating…' : ''}
        </caption>
        <thead>
          {table.getHeaderGroups().map((headerGroup) => (
            <tr key={headerGroup.id}>
              {headerGroup.headers.map((header) => {
                const sorted = header.column.getIsSorted();
                const numeric = (header.column.columnDef.meta as { numeric?: boolean } | undefined)?.numeric;
                return (
                  <th key={header.id} scope="col" className={numeric ? 'num' : undefined} aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}>
                    <button type="button" className="sort" onClick={header.column.getToggleSortingHandler()}>
                      {flexRender(header.column.columnDef.header, header.getContext())}
                      <span aria-hidden="true">{sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}</span>
                    </button>
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => {
            const line = row.original;
            const over = isNegative(sumsOf(line).variance);
            const classes = [line.kind === 'group' ? 'group-row' : 'task-row', over ? 'over-budget' : '', `depth-${Math.min(row.depth, 4)}`].join(' ');
            return (
              <tr key={row.id} className={classes} data-row-id={row.id}>
                {row.getVisibleCells().map((cell, index) => {
                  const numeric = (cell.column.columnDef.meta as { numeric?: boolean } | undefined)?.numeric;
                  const content = flexRender(cell.column.columnDef.cell, cell.getContext());
                  const label = typeof cell.column.columnDef.header === 'string' ? cell.column.columnDef.header : undefined;
                  return index === 0 ? (
                    <th key={cell.id} scope="row">{content}</th>
                  ) : (
                    <td key={cell.id} className={numeric ? 'num' : undefined} data-col={cell.column.id} data-label={label}>{content}</td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
        <tfoot>
          <tr className={`totals-row${isNegative(list.totals.variance) ? ' over-budget' : ''}`}>
            <th scope="row">Total{list.totals.has_missing_rates === true && <MissingRates />}</th>
            <td className="filler" />
            <td className="filler" />
            {figures.map((figure) => (
              <td key={figure.key} className="num" data-col={figure.key} data-label={figure.header}>
                {figure.key === 'variance' ? <Variance value={list.totals.variance} currency={currency} /> : shownFigure(figure, list.totals[figure.key], currency)}
                {figure.key === 'actual_margin' && <MarginPercent totals={list.totals} />}
              </td>
            ))}
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

/** The project's margin as a share of its revenue (actual_margin / actual_revenue), from the service's decimals. */
function MarginPercent({ totals }: { totals: Sums }) {
  if (totals.actual_margin === undefined || totals.actual_revenue === undefined) return null;
  const percent = ratioPercent(totals.actual_margin, totals.actual_revenue);
  return (
    <span className="margin-percent" data-testid="margin-percent">
      {percent === null ? 'no revenue' : `${percent} of revenue`}
    </span>
  );
}

/** Said beside a row whose members (or those of a task summed in it) have a rate that resolves to none. */
function MissingRates() {
  return (
    <span className="badge warn missing-rates" title="Someone here has no cost or bill rate on a day that counts: see the breakdown's warnings">
      missing rates
    </span>
  );
}

function Variance({ value, currency }: { value: Decimal; currency: string }) {
  const over = isNegative(value);
  return (
    <span className={over ? 'variance over' : 'variance'}>
      {formatMoney(value, currency)}
      {over && <span className="badge">over estimate</span>}
    </span>
  );
}

function NameCell({ row, pending, onOpen, onExpand }: { row: Row<Line>; pending: boolean; onOpen: (id: string, withSubtasks: boolean) => void; onExpand: (id: string) => void }) {
  const line = row.original;
  const name = line.kind === 'group' ? line.group.group_name : line.task.name;
  const toggle = row.getCanExpand() ? (
    <button
      type="button"
      className="expander"
      aria-expanded={row.getIsExpanded()}
      aria-label={`${row.getIsExpanded() ? 'Collapse' : 'Expand'} ${line.kind === 'group' ? `group ${name}` : `subtasks of ${name}`}`}
      onClick={() => {
        if (line.kind === 'task' && !row.getIsExpanded()) onExpand(line.task.id);
        row.toggleExpanded();
      }}
    >
      <span aria-hidden="true">{row.getIsExpanded() ? '▾' : '▸'}</span>
    </button>
  ) : (
    <span className="expander-space" aria-hidden="true" />
  );
  return (
    <span className="name-cell">
      {toggle}
      {line.kind === 'group' ? (
        <span className="group-name">
          {name || '(none)'} <span className="count">({line.sub.length} {line.sub.length === 1 ? 'task' : 'tasks'})</span>
        </span>
      ) : (
        <button type="button" className="link" onClick={() => onOpen(line.task.id, line.task.sub_tasks_count > 0)} aria-label={`Breakdown of ${name}`}>
          {name}
        </button>
      )}
      {(line.kind === 'group' ? line.group : line.task).has_missing_rates === true && <MissingRates />}
      {pending && <span role="status" className="hint"> loading subtasks…</span>}
    </span>
  );
}

type Edit =
  | { state: 'idle' }
  | { state: 'loading' }
  | { state: 'editing'; etag: string | null; error?: string; conflict?: Decimal };

/**
 * The fixed cost in place: opening the editor reads the task's version (ETag), saving sends it as
 * If-Match. When the task changed meanwhile (412) the current value is shown and the user decides.
 */
function FixedCostCell({ api, task, currency, onSaved }: { api: Api; task: ListTask; currency: string; onSaved: () => void }) {
  const [edit, setEdit] = useState<Edit>({ state: 'idle' });
  const [value, setValue] = useState('');
  const [saving, setSaving] = useState(false);
  const inputId = useId();
  const inputRef = useRef<HTMLInputElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (edit.state === 'editing') inputRef.current?.focus();
  }, [edit.state]);

  const current = async () => api.json<Breakdown>(`/project-finance/task/${task.id}/breakdown`);

  const open = async () => {
    setEdit({ state: 'loading' });
    try {
      const reply = await current();
      setValue(String(reply.body.task.fixed_cost));
      setEdit({ state: 'editing', etag: reply.etag });
    } catch (err) {
      setEdit({ state: 'editing', etag: null, error: explain(err) });
    }
  };
  const close = () => {
    setEdit({ state: 'idle' });
    setTimeout(() => editButton.current?.focus(), 0);
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (edit.state !== 'editing') return;
    const text = value.trim();
    if (!/^\d+(\.\d+)?$/.test(text)) {
      setEdit({ ...edit, error: 'Enter an amount of 0 or more, like 1250.50', conflict: undefined });
      return;
    }
    setSaving(true);
    try {
      await api.json(`/project-finance/task/${task.id}/fixed-cost`, { method: 'PUT', body: { fixed_cost: Number(text) }, ifMatch: edit.etag ?? undefined });
      setEdit({ state: 'idle' });
      onSaved();
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        try {
          const reply = await current();
          setEdit({ state: 'editing', etag: reply.etag, conflict: reply.body.task.fixed_cost });
        } catch (again) {
          setEdit({ ...edit, error: explain(again) });
        }
      } else if (err instanceof ApiError && err.status === 400) {
        const detail = err.details.map((d) => d.message).join('; ');
        setEdit({ ...edit, error: detail ? `Fixed cost ${detail}` : err.message, conflict: undefined });
      } else {
        setEdit({ ...edit, error: explain(err), conflict: undefined });
      }
    } finally {
      setSaving(false);
    }
  };

  if (edit.state !== 'editing') {
    return (
      <span className="fixed-cost">
        {formatMoney(task.fixed_cost, currency)}
        <button type="button" ref={editButton} className="small icon" onClick={open} disabled={edit.state === 'loading'} aria-label={`Edit fixed cost of ${task.name}`} title="Edit">
          <span aria-hidden="true">✎</span>
        </button>
      </span>
    );
  }
  const errorId = `${inputId}-error`;
  const conflictId = `${inputId}-conflict`;
  return (
    <form className="fixed-cost-form" onSubmit={save} onKeyDown={(e) => e.key === 'Escape' && close()}>
      <label htmlFor={inputId} className="visually-hidden">Fixed cost of {task.name} ({currency})</label>
      <input
        id={inputId}
        ref={inputRef}
        inputMode="decimal"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        aria-invalid={edit.error ? true : undefined}
        aria-describedby={[edit.error ? errorId : '', edit.conflict !== undefined ? conflictId : ''].join(' ').trim() || undefined}
      />
      <button type="submit" className="small" disabled={saving}>{edit.conflict !== undefined ? 'Save anyway' : 'Save'}</button>
      <button type="button" className="small" onClick={close}>Cancel</button>
      {edit.error && <span id={errorId} role="alert" className="error field-error">{edit.error}</span>}
      {edit.conflict !== undefined && (
        <span id={conflictId} role="alert" className="conflict">
          Someone changed this fixed cost meanwhile: it is now <strong>{formatMoney(edit.conflict, currency)}</strong>. Save again to replace it with yours, or{' '}
          <button type="button" className="link" onClick={() => { setValue(String(edit.conflict)); setEdit({ state: 'editing', etag: edit.etag }); }}>
            keep the current value
          </button>
          .
        </span>
      )}
    </form>
  );
}
