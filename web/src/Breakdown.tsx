import { BarElement, CategoryScale, Chart as ChartJS, Legend, LinearScale, Tooltip } from 'chart.js';
import { Fragment, useEffect, useRef, useState } from 'react';
import { Bar } from 'react-chartjs-2';
import { Api, Breakdown, RateWarning } from './api';
import { MemberRates } from './MemberRates';
import { formatHours, formatMoney, toNumber } from './format';

ChartJS.register(CategoryScale, LinearScale, BarElement, Tooltip, Legend);

type Props = {
  api: Api;
  projectId: string;
  isAdmin: boolean;
  taskId: string;
  withSubtasks: boolean;
  currency: string;
  revision: number;
  onClose: () => void;
  onSaved: () => void;
  onError: (err: unknown) => void;
};

const WARNINGS: Record<RateWarning['code'], string> = {
  MISSING_COST_RATE: 'has no cost rate on some day that counts (costed at 0)',
  MISSING_BILL_RATE: 'has no bill rate on some day that counts (billed at 0)',
};

/** A task's breakdown beside the list: summary, role groups with their members, estimate against actual per role. */
export function BreakdownPanel({ api, projectId, isAdmin, taskId, withSubtasks, currency, revision, onClose, onSaved, onError }: Props) {
  const [breakdown, setBreakdown] = useState<Breakdown | null>(null);
  const [ratesOf, setRatesOf] = useState<{ team_member_id: string; name: string } | null>(null);
  const shownFor = useRef('');
  const heading = useRef<HTMLHeadingElement>(null);
  // Closing hands the focus back to what opened the panel (the task's name in the list).
  const opener = useRef<Element | null>(document.activeElement);
  const close = () => {
    onClose();
    const back = opener.current;
    if (back instanceof HTMLElement && back.isConnected) setTimeout(() => back.focus(), 0);
  };

  useEffect(() => {
    let live = true;
    // Another task's breakdown is never shown; the same task's stays while it is read again (after a save).
    const key = `${taskId}|${withSubtasks}`;
    if (shownFor.current !== key) {
      shownFor.current = key;
      setBreakdown(null);
      setRatesOf(null);
    }
    api
      .json<Breakdown>(`/project-finance/task/${taskId}/breakdown${withSubtasks ? '?include_subtasks=true' : ''}`)
      .then((reply) => live && setBreakdown(reply.body))
      .catch((err: unknown) => live && onError(err));
    return () => {
      live = false;
    };
  }, [api, taskId, withSubtasks, revision, onError]);

  useEffect(() => {
    if (breakdown) heading.current?.focus();
  }, [breakdown?.task.id]);

  const money = (v: Breakdown['task']['fixed_cost']) => formatMoney(v, currency);

  return (
    <aside className="panel" aria-labelledby="breakdown-title" onKeyDown={(e) => e.key === 'Escape' && close()}>
      <div className="panel-head">
        <h2 id="breakdown-title" tabIndex={-1} ref={heading}>
          {breakdown ? breakdown.task.name : 'Breakdown'}
        </h2>
        <button type="button" onClick={close} aria-label="Close the breakdown">Close</button>
      </div>
      {!breakdown && <p role="status">Loading the breakdown…</p>}
      {breakdown && (
        <>
          {withSubtasks && <p className="hint">Including its subtasks.</p>}
          <dl className="summary">
            <dt>Estimated hours</dt><dd>{formatHours(breakdown.task.estimated_hours)}</dd>
            <dt>Logged hours</dt><dd>{formatHours(breakdown.task.logged_hours)}</dd>
            <dt>Est. labor cost</dt><dd>{money(breakdown.task.estimated_labor_cost)}</dd>
            <dt>Actual labor cost</dt><dd>{money(breakdown.task.actual_labor_cost)}</dd>
            <dt>Fixed cost</dt><dd>{money(breakdown.task.fixed_cost)}</dd>
            <dt>Total est. cost</dt><dd>{money(breakdown.task.total_estimated_cost)}</dd>
            <dt>Total actual cost</dt><dd>{money(breakdown.task.total_actual_cost)}</dd>
            {breakdown.task.actual_revenue !== undefined && (
              <>
                <dt>Est. revenue</dt><dd>{money(breakdown.task.estimated_revenue ?? 0)}</dd>
                <dt>Actual revenue</dt><dd>{money(breakdown.task.actual_revenue)}</dd>
                <dt>Est. margin</dt><dd>{money(breakdown.task.estimated_margin ?? 0)}</dd>
                <dt>Actual margin</dt><dd>{money(breakdown.task.actual_margin ?? 0)}</dd>
              </>
            )}
          </dl>
          {breakdown.warnings && breakdown.warnings.length > 0 && (
            <div className="warnings" role="note" aria-label="Warnings">
              <h3>Missing rates</h3>
              <ul>
                {breakdown.warnings.map((w) => (
                  <li key={`${w.code}|${w.team_member_id}`} data-code={w.code} data-member={w.team_member_id}>
                    <button type="button" className="link" onClick={() => setRatesOf({ team_member_id: w.team_member_id, name: w.name })}>{w.name}</button> {WARNINGS[w.code]}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {breakdown.grouped_members.length === 0 ? (
            <p className="empty">Nobody is assigned and no time is logged.</p>
          ) : (
            <>
              <div className="chart" >
                <Bar
                  aria-label={`Estimated and actual labor cost per role, ${currency}`}
                  role="img"
                  data={{
                    labels: breakdown.grouped_members.map((g) => g.jobRole),
                    datasets: [
                      { label: 'Estimated', data: breakdown.grouped_members.map((g) => toNumber(g.estimated_cost)), backgroundColor: '#5b8def' },
                      { label: 'Actual', data: breakdown.grouped_members.map((g) => toNumber(g.actual_cost)), backgroundColor: '#f28b30' },
                    ],
                  }}
                  options={{
                    responsive: true,
                    maintainAspectRatio: false,
                    animation: false,
                    plugins: { tooltip: { callbacks: { label: (ctx) => `${ctx.dataset.label}: ${formatMoney(ctx.parsed.y ?? 0, currency)}` } } },
                    scales: { y: { beginAtZero: true, ticks: { callback: (v) => formatMoney(Number(v), currency) } } },
                  }}
                />
              </div>
              <div className="table-wrap">
                <table className="roles">
                  <caption>Cost per role and member</caption>
                  <thead>
                    <tr>
                      <th scope="col">Role / member</th>
                      <th scope="col" className="num">Rate</th>
                      <th scope="col" className="num">Est. hours</th>
                      <th scope="col" className="num">Logged</th>
                      <th scope="col" className="num">Est. cost</th>
                      <th scope="col" className="num">Actual cost</th>
                    </tr>
                  </thead>
                  {breakdown.grouped_members.map((group) => (
                    <tbody key={group.jobRole} className="role-group">
                      <tr className="group-row">
                        <th scope="row">{group.jobRole}</th>
                        <td />
                        <td className="num">{formatHours(group.estimated_hours)}</td>
                        <td className="num">{formatHours(group.logged_hours)}</td>
                        <td className="num">{money(group.estimated_cost)}</td>
                        <td className="num">{money(group.actual_cost)}</td>
                      </tr>
                      {group.members.map((m) => (
                        <Fragment key={m.team_member_id}>
                          <tr className="member-row">
                            <th scope="row" className="member">
                              <button type="button" className="link" aria-label={`Rates of ${m.name}`} aria-expanded={ratesOf?.team_member_id === m.team_member_id} onClick={() => setRatesOf(ratesOf?.team_member_id === m.team_member_id ? null : { team_member_id: m.team_member_id, name: m.name })}>
                                {m.name}
                              </button>
                            </th>
                            <td className="num">{money(m.hourly_rate)}</td>
                            <td className="num">{formatHours(m.estimated_hours)}</td>
                            <td className="num">{formatHours(m.logged_hours)}</td>
                            <td className="num">{money(m.estimated_cost)}</td>
                            <td className="num">{money(m.actual_cost)}</td>
                          </tr>
                          {/* How the actual cost is made up: one line per role and rate in force on the days logged. */}
                          {m.cost_lines.length > 1 &&
                            m.cost_lines.map((line) => (
                              <tr key={`${line.first_day}|${line.job_role}|${String(line.hourly_rate)}`} className="cost-line">
                                <th scope="row" className="line">
                                  {line.job_role}, {line.first_day === line.last_day ? line.first_day : `${line.first_day} to ${line.last_day}`}
                                </th>
                                <td className="num">{money(line.hourly_rate)}</td>
                                <td />
                                <td className="num">{formatHours(line.logged_hours)}</td>
                                <td />
                                <td className="num">{money(line.actual_cost)}</td>
                              </tr>
                            ))}
                        </Fragment>
                      ))}
                    </tbody>
                  ))}
                </table>
              </div>
            </>
          )}
          {ratesOf && (
            <MemberRates key={ratesOf.team_member_id} api={api} projectId={projectId} member={ratesOf} currency={currency} isAdmin={isAdmin} revision={revision} onSaved={onSaved} onError={onError} />
          )}
        </>
      )}
    </aside>
  );
}
