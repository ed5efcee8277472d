import { useEffect, useId, useState } from 'react';
import { Api, ApiError, BudgetAlert, BudgetFigures, BudgetKind, BudgetStatus, Decimal, explain } from './api';
import { formatHours, formatMoney, formatPercent, formatTime, isNegative, toNumber } from './format';

type Props = { api: Api; projectId: string; revision: number; onError: (err: unknown) => void };

/** "2026-11" moved by some months: "2026-12", "2027-01"... */
function shiftMonth(month: string, by: number): string {
  const [year, index] = month.split('-').map(Number) as [number, number];
  const total = year * 12 + (index - 1) + by;
  return `${String(Math.floor(total / 12)).padStart(4, '0')}-${String((total % 12) + 1).padStart(2, '0')}`;
}

const monthName = new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const nameOfMonth = (month: string) => monthName.format(new Date(`${month}-01T00:00:00Z`));

/**
 * The project's budget (GET /api/projects/:id/budget): money and hours used, each a bar with the
 * alert thresholds marked, crossed ones highlighted; a monthly budget picks its month. Every figure
 * is the service's. A service without the route (404) shows nothing.
 */
export function BudgetSection({ api, projectId, revision, onError }: Props) {
  const [status, setStatus] = useState<BudgetStatus | null>(null);
  const [absent, setAbsent] = useState(false);
  /** YYYY-MM of a monthly budget, or empty: the current month, as the service decides (project zone). */
  const [month, setMonth] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const monthId = useId();

  useEffect(() => {
    let live = true;
    setLoading(true);
    api
      .json<BudgetStatus>(`/projects/${projectId}/budget${month ? `?month=${month}` : ''}`)
      .then((reply) => {
        if (!live) return;
        setStatus(reply.body);
        setProblem(null);
      })
      .catch((err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 404) setAbsent(true);
        else if (err instanceof ApiError && err.status === 400) setProblem(explain(err));
        else onError(err);
      })
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [api, projectId, month, revision, onError]);

  if (absent || !status) return null;

  const monthly = status.period.kind === 'month';
  /** The month whose figures are shown (the heading says it), and the one asked for (the picker), ahead while it loads. */
  const shownMonth = status.period.from?.slice(0, 7) ?? '';
  const pickedMonth = month || shownMonth;
  const none = status.money.budget === null && status.hours.budget === null;

  return (
    <section className="budget" aria-labelledby="budget-title" aria-busy={loading}>
      <div className="budget-head">
        <h2 id="budget-title">
          Budget{monthly && shownMonth ? `, ${nameOfMonth(shownMonth)}` : monthly ? ', this month' : ' (whole project)'}
        </h2>
        {monthly && pickedMonth && (
          <div className="month-picker" role="group" aria-label="Month of the budget">
            <button type="button" className="small" onClick={() => setMonth(shiftMonth(pickedMonth, -1))} aria-label="Previous month">‹</button>
            <label htmlFor={monthId} className="visually-hidden">Month</label>
            <input id={monthId} type="month" value={pickedMonth} onChange={(e) => e.target.value && setMonth(e.target.value)} />
            <button type="button" className="small" onClick={() => setMonth(shiftMonth(pickedMonth, 1))} aria-label="Next month">›</button>
          </div>
        )}
      </div>
      {monthly && <p className="hint">Monthly budget: the time logged in the month (project time zone); fixed costs do not count.</p>}
      {problem && <p role="alert" className="error">{problem}</p>}
      {none ? (
        <p className="empty">No budget is set for this project.</p>
      ) : (
        <div className="budget-bars">
          <BudgetBar kind="money" figures={status.money} alerts={status.alerts.filter((a) => a.kind === 'money')} currency={status.currency} />
          <BudgetBar kind="hours" figures={status.hours} alerts={status.alerts.filter((a) => a.kind === 'hours')} currency={status.currency} />
        </div>
      )}
    </section>
  );
}

const TITLES: Record<BudgetKind, string> = { money: 'Money', hours: 'Hours' };

function BudgetBar({ kind, figures, alerts, currency }: { kind: BudgetKind; figures: BudgetFigures; alerts: BudgetAlert[]; currency: string }) {
  const amount = (value: Decimal) => (kind === 'money' ? formatMoney(value, currency) : `${formatHours(value)} h`);
  if (figures.budget === null) {
    return (
      <div className="budget-item" data-kind={kind}>
        <h3>{TITLES[kind]}</h3>
        <p className="empty">No {kind === 'money' ? 'money' : 'hours'} budget; <span data-figure="spent">{amount(figures.spent)}</span> used.</p>
      </div>
    );
  }
  // Display-only geometry: where the fill ends and the marks stand on a scale that holds the use and every threshold.
  const used = figures.percent_used === null ? 0 : toNumber(figures.percent_used);
  const scale = Math.max(100, used, ...alerts.map((a) => a.percent));
  const at = (percent: number) => `${(Math.min(percent, scale) / scale) * 100}%`;
  const crossed = alerts.some((a) => a.crossed);
  const fill = used >= 100 ? 'fill over' : crossed ? 'fill warn' : 'fill';
  return (
    <div className="budget-item" data-kind={kind}>
      <h3>{TITLES[kind]}</h3>
      <p className="budget-figures">
        <span data-figure="spent">{amount(figures.spent)}</span> of <span data-figure="budget">{amount(figures.budget)}</span>
        {figures.percent_used !== null && <> (<span data-figure="percent_used">{formatPercent(figures.percent_used)}</span>)</>}
        {figures.remaining !== null &&
          (isNegative(figures.remaining) ? (
            <>; <span className="over-by" data-figure="remaining">{amount(String(figures.remaining).trim().slice(1))}</span> over</>
          ) : (
            <>; <span data-figure="remaining">{amount(figures.remaining)}</span> left</>
          ))}
      </p>
      <div
        className="bar"
        role="meter"
        aria-label={`${TITLES[kind]} budget used`}
        aria-valuemin={0}
        aria-valuemax={scale}
        aria-valuenow={used}
        aria-valuetext={figures.percent_used === null ? 'no percentage (budget of 0)' : `${formatPercent(figures.percent_used)} used`}
      >
        <div className={fill} style={{ width: at(used) }} />
        {scale > 100 && <span className="mark full" style={{ left: at(100) }} aria-hidden="true" />}
        {alerts.map((a) => (
          <span key={a.percent} className={a.crossed ? 'mark crossed' : 'mark'} data-percent={a.percent} style={{ left: at(a.percent) }} aria-hidden="true" />
        ))}
      </div>
      {alerts.length > 0 && (
        <ul className="thresholds" aria-label={`Alert thresholds of the ${kind} budget`}>
          {alerts.map((a) => (
            <li key={a.percent} className={a.crossed ? 'threshold crossed' : 'threshold'} data-percent={a.percent}>
              <strong>{a.percent}%</strong>{' '}
              {a.crossed ? (
                <>
                  <span className="badge">crossed</span>
                  {a.crossed_at && <> <time dateTime={a.crossed_at}>{formatTime(a.crossed_at)}</time></>}
                </>
              ) : (
                <span className="hint">not reached</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
