import { FormEvent, useEffect, useState } from 'react';
import { Api, ApiError, RateCard, RatePreview, explain } from './api';
import { formatMoney } from './format';

const byName = (card: RateCard): RateCard => ({ ...card, roles: [...card.roles].sort((a, b) => a.job_role_name.localeCompare(b.job_role_name)) });

type Props = { api: Api; projectId: string; isAdmin: boolean; onSaved: () => void; onError: (err: unknown) => void };

/** The project's hourly rates per job role: read-only, editable by admins (PUT replaces the card). */
export function RateCardSection({ api, projectId, isAdmin, onSaved, onError }: Props) {
  const [card, setCard] = useState<RateCard | null>(null);
  const [draft, setDraft] = useState<Record<string, string> | null>(null);
  const [message, setMessage] = useState<{ error: boolean; text: string; field?: string } | null>(null);
  /** The day the edited card takes effect (YYYY-MM-DD); empty: today, as the service decides. */
  const [effectiveFrom, setEffectiveFrom] = useState('');
  const [preview, setPreview] = useState<RatePreview | null>(null);

  useEffect(() => {
    let live = true;
    api
      .json<RateCard>(`/projects/${projectId}/rate-card`)
      .then((reply) => live && setCard(byName(reply.body)))
      .catch((err: unknown) => live && onError(err));
    return () => {
      live = false;
    };
  }, [api, projectId, onError]);

  if (!card) return null;

  /** The PUT's body from the draft, or undefined (with a message) when a rate is not a number. */
  const bodyOf = () => {
    if (!draft) return undefined;
    // Empty: no cost rate from that day (a role may have a bill rate only).
    const bad = card.roles.find((r) => !/^(\d+(\.\d+)?)?$/.test((draft[r.job_role_id] ?? '').trim()));
    if (bad) {
      setMessage({ error: true, field: bad.job_role_id, text: `Enter a rate of 0 or more for ${bad.job_role_name}` });
      return undefined;
    }
    const rateOf = (text: string) => (text === '' ? null : Number(text));
    const roles = card.roles.map((r) => ({ job_role_id: r.job_role_id, hourly_rate: rateOf((draft[r.job_role_id] ?? '').trim()) }));
    return effectiveFrom ? { roles, effective_from: effectiveFrom } : { roles };
  };

  const failed = (err: unknown) => {
    const field = err instanceof ApiError ? err.details[0]?.path : undefined;
    setMessage({ error: true, text: explain(err), field });
  };

  // A dry run: what the change would do to the project's totals and to each task, nothing written.
  const dryRun = async () => {
    const body = bodyOf();
    if (!body) return;
    try {
      setMessage(null);
      setPreview((await api.json<RatePreview>(`/projects/${projectId}/rate-card/preview`, { method: 'POST', body })).body);
    } catch (err) {
      failed(err);
    }
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const body = bodyOf();
    if (!body) return;
    try {
      await api.json<RateCard>(`/projects/${projectId}/rate-card`, { method: 'PUT', body });
      // The card in force today (a change from a later day shows from that day on).
      setCard(byName((await api.json<RateCard>(`/projects/${projectId}/rate-card`)).body));
      setDraft(null);
      setPreview(null);
      setEffectiveFrom('');
      setMessage({ error: false, text: `Rate card saved from ${body.effective_from ?? 'today'} on; the figures are updated.` });
      onSaved();
    } catch (err) {
      failed(err);
    }
  };

  const money = (value: RateCard['roles'][number]['hourly_rate']) => (value === null ? '—' : formatMoney(value, card.currency));
  // Bill rates show when the service has them; the editor changes cost rates only (a PUT without bill_rate keeps them).
  const withBillRates = card.roles.some((r) => r.bill_rate !== undefined && r.bill_rate !== null);

  return (
    <section className="rate-card" aria-labelledby="rate-card-title">
      <h2 id="rate-card-title">Rate card ({card.currency}), in force on {card.date}</h2>
      {card.roles.length === 0 && <p className="empty">No rates set for this project.</p>}
      {card.roles.length > 0 && (
        <form onSubmit={save}>
          <table>
            <thead>
              <tr>
                <th scope="col">Job role</th>
                <th scope="col" className="num">Hourly rate</th>
                {withBillRates && <th scope="col" className="num">Bill rate</th>}
              </tr>
            </thead>
            <tbody>
              {card.roles.map((role) => (
                <tr key={role.job_role_id}>
                  <th scope="row">{role.job_role_name}</th>
                  <td className="num">
                    {draft ? (
                      <>
                        <label className="visually-hidden" htmlFor={`rate-${role.job_role_id}`}>Hourly rate of {role.job_role_name}</label>
                        <input
                          id={`rate-${role.job_role_id}`}
                          inputMode="decimal"
                          value={draft[role.job_role_id] ?? ''}
                          aria-invalid={message?.error && message.field === role.job_role_id ? true : undefined}
                          onChange={(e) => setDraft({ ...draft, [role.job_role_id]: e.target.value })}
                        />
                      </>
                    ) : (
                      money(role.hourly_rate)
                    )}
                  </td>
                  {withBillRates && <td className="num" data-col="bill_rate">{money(role.bill_rate ?? null)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
          {isAdmin && !draft && (
            <button type="button" onClick={() => { setMessage(null); setDraft(Object.fromEntries(card.roles.map((r) => [r.job_role_id, r.hourly_rate === null ? '' : String(r.hourly_rate)]))); }}>
              Edit rates
            </button>
          )}
          {draft && (
            <>
              <p>
                <label htmlFor="rate-effective-from">Effective from </label>
                <input
                  id="rate-effective-from"
                  type="date"
                  value={effectiveFrom}
                  aria-invalid={message?.error && message.field === 'effective_from' ? true : undefined}
                  onChange={(e) => { setEffectiveFrom(e.target.value); setPreview(null); }}
                />{' '}
                <span className="hint">(empty: today; earlier work keeps the rates of its days)</span>
              </p>
              <div className="actions">
                <button type="button" onClick={dryRun}>Preview</button>
                <button type="submit">Save rates</button>
                <button type="button" onClick={() => { setDraft(null); setMessage(null); setPreview(null); setEffectiveFrom(''); }}>Cancel</button>
              </div>
            </>
          )}
          {preview && (
            <div className="preview" aria-live="polite">
              <h3>If saved from {preview.effective_from} on</h3>
              <table>
                <caption>Project totals</caption>
                <thead>
                  <tr><th scope="col" /><th scope="col" className="num">Before</th><th scope="col" className="num">After</th></tr>
                </thead>
                <tbody>
                  <tr><th scope="row">Total estimated cost</th><td className="num">{money(preview.project_totals.before.total_estimated_cost)}</td><td className="num">{money(preview.project_totals.after.total_estimated_cost)}</td></tr>
                  <tr><th scope="row">Total actual cost</th><td className="num">{money(preview.project_totals.before.total_actual_cost)}</td><td className="num">{money(preview.project_totals.after.total_actual_cost)}</td></tr>
                </tbody>
              </table>
              <p>{preview.tasks.length === 0 ? 'No task changes.' : `${preview.tasks.length} task${preview.tasks.length === 1 ? '' : 's'} change:`}</p>
              {preview.tasks.length > 0 && (
                <table>
                  <caption>Tasks that change (total estimated and actual cost)</caption>
                  <thead>
                    <tr><th scope="col">Task</th><th scope="col" className="num">Estimated</th><th scope="col" className="num">Actual</th></tr>
                  </thead>
                  <tbody>
                    {preview.tasks.slice(0, 50).map((task) => (
                      <tr key={task.id}>
                        <th scope="row">{task.name}</th>
                        <td className="num">{money(task.before.total_estimated_cost)} → {money(task.after.total_estimated_cost)}</td>
                        <td className="num">{money(task.before.total_actual_cost)} → {money(task.after.total_actual_cost)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              {preview.tasks.length > 50 && <p className="hint">And {preview.tasks.length - 50} more.</p>}
            </div>
          )}
          {!isAdmin && <p className="hint">Only admins change the rate card.</p>}
          {message && <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : 'ok'}>{message.text}</p>}
        </form>
      )}
    </section>
  );
}
