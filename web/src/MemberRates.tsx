import { FormEvent, useEffect, useId, useState } from 'react';
import { Api, ApiError, Decimal, RateCard, RateExplanation, ResolvedRate, explain } from './api';
import { formatMoney, formatTime } from './format';

type Props = {
  api: Api;
  projectId: string;
  member: { team_member_id: string; name: string };
  currency: string;
  isAdmin: boolean;
  revision: number;
  onSaved: () => void;
  onError: (err: unknown) => void;
};

type RateKey = 'hourly_rate' | 'bill_rate';
const RATES: { key: RateKey; label: string }[] = [
  { key: 'hourly_rate', label: 'Cost rate' },
  { key: 'bill_rate', label: 'Bill rate' },
];

/** A draft rate: left out (keep), a number, or "the role's rate" (null). */
type DraftRate = { text: string; useRole: boolean };
type Draft = Record<RateKey, DraftRate> & { effectiveFrom: string };
const emptyDraft = (): Draft => ({ hourly_rate: { text: '', useRole: false }, bill_rate: { text: '', useRole: false }, effectiveFrom: '' });

type Preview = { date: string; before: Record<RateKey, ResolvedRate>; after: Record<RateKey, ResolvedRate> };

/**
 * A member's rates in the project and why (GET .../members/:id/rates): the role, each rate with where
 * it comes from (the member's own entry, its role's, or none), and its own entries. Admins write own
 * rates (PUT) after a preview of the rates on the day they take effect, before and after.
 */
export function MemberRates({ api, projectId, member, currency, isAdmin, revision, onSaved, onError }: Props) {
  const [date, setDate] = useState('');
  const [explanation, setExplanation] = useState<RateExplanation | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [message, setMessage] = useState<{ error: boolean; text: string; field?: string } | null>(null);
  const ids = { date: useId(), form: useId() };
  const path = `/projects/${projectId}/members/${member.team_member_id}/rates`;

  useEffect(() => {
    let live = true;
    api
      .json<RateExplanation>(`${path}${date ? `?date=${date}` : ''}`)
      .then((reply) => live && setExplanation(reply.body))
      .catch((err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 400) setMessage({ error: true, text: explain(err), field: 'date' });
        else onError(err);
      });
    return () => {
      live = false;
    };
  }, [api, path, date, revision, onError]);

  const unit = explanation?.rate_unit === 'day' ? 'day' : 'hour';
  const money = (value: Decimal) => formatMoney(value, currency);

  /** The PUT's body from the draft, or undefined with a message. */
  const bodyOf = (current: Draft) => {
    const body: Record<string, unknown> = {};
    for (const { key, label } of RATES) {
      const rate = current[key];
      if (rate.useRole) body[key] = null;
      else if (rate.text.trim() !== '') {
        if (!/^\d+(\.\d+)?$/.test(rate.text.trim())) {
          setMessage({ error: true, field: key, text: `${label}: enter an amount of 0 or more, like 95.50` });
          return undefined;
        }
        body[key] = Number(rate.text.trim());
      }
    }
    if (!('hourly_rate' in body) && !('bill_rate' in body)) {
      setMessage({ error: true, field: 'hourly_rate', text: 'Enter a cost rate or a bill rate (or choose the role\'s rate)' });
      return undefined;
    }
    if (current.effectiveFrom) body.effective_from = current.effectiveFrom;
    return body;
  };

  const failed = (err: unknown) => setMessage({ error: true, text: explain(err), field: err instanceof ApiError ? err.details[0]?.path : undefined });

  // The rates on the day the change takes effect, as they are and as they would be (R22 of docs/finance-rules.md:
  // each rate on its own, the member's own entry, else its role's in the card, else none). Nothing is written.
  const dryRun = async () => {
    if (!draft) return;
    const body = bodyOf(draft);
    if (!body) return;
    try {
      setMessage(null);
      const on = draft.effectiveFrom;
      const before = (await api.json<RateExplanation>(`${path}${on ? `?date=${on}` : ''}`)).body;
      const card = (await api.json<RateCard>(`/projects/${projectId}/rate-card?date=${before.date}`)).body;
      const roleEntry = card.roles.find((r) => r.job_role_id === before.job_role?.id);
      const after = (key: RateKey): ResolvedRate => {
        if (!(key in body)) return before[key];
        const value = body[key] as number | null;
        if (value !== null) return { amount: String(draft[key].text.trim()), source: 'member', effective_from: before.date };
        const roleRate = roleEntry?.[key];
        return roleRate !== undefined && roleRate !== null ? { amount: roleRate, source: 'role', effective_from: roleEntry?.effective_from ?? null } : { amount: 0, source: 'none', effective_from: null };
      };
      setPreview({ date: before.date, before: { hourly_rate: before.hourly_rate, bill_rate: before.bill_rate }, after: { hourly_rate: after('hourly_rate'), bill_rate: after('bill_rate') } });
    } catch (err) {
      failed(err);
    }
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft) return;
    const body = bodyOf(draft);
    if (!body) return;
    try {
      await api.json(path, { method: 'PUT', body });
      setDraft(null);
      setPreview(null);
      setMessage({ error: false, text: `Rates of ${member.name} saved from ${draft.effectiveFrom || 'today'} on; the figures are updated.` });
      onSaved();
    } catch (err) {
      failed(err);
    }
  };

  const edit = (key: RateKey, change: Partial<DraftRate>) => {
    if (!draft) return;
    setDraft({ ...draft, [key]: { ...draft[key], ...change } });
    setPreview(null);
  };

  return (
    <section className="member-rates" aria-label={`Rates of ${member.name}`}>
      <h3>Rates of {member.name}{explanation ? ` on ${explanation.date}` : ''}</h3>
      <p className="explain-day">
        <label htmlFor={ids.date}>Explain the day </label>
        <input id={ids.date} type="date" value={date} onChange={(e) => setDate(e.target.value)} aria-invalid={message?.field === 'date' ? true : undefined} />
      </p>
      {!explanation && <p role="status">Loading the rates…</p>}
      {explanation && (
        <>
          <dl className="summary rates">
            <dt>Role</dt>
            <dd data-rate="role">{explanation.job_role?.name ?? 'none'}</dd>
            {RATES.map(({ key, label }) => (
              <ResolvedRateItem key={key} label={label} rate={explanation[key]} rateKey={key} unit={unit} money={money} role={explanation.job_role?.name ?? null} />
            ))}
          </dl>
          {explanation.overrides.length > 0 ? (
            <div className="table-wrap">
              <table className="overrides">
                <caption>Own rates of {member.name}</caption>
                <thead>
                  <tr>
                    <th scope="col">From</th>
                    <th scope="col" className="num">Cost rate</th>
                    <th scope="col" className="num">Bill rate</th>
                    <th scope="col">Written</th>
                  </tr>
                </thead>
                <tbody>
                  {explanation.overrides.map((entry) => (
                    <tr key={entry.effective_from}>
                      <th scope="row">{entry.effective_from}</th>
                      <td className="num">{entry.hourly_rate === null ? 'role\'s' : money(entry.hourly_rate)}</td>
                      <td className="num">{entry.bill_rate === null ? 'role\'s' : money(entry.bill_rate)}</td>
                      <td className="written">{formatTime(entry.written_at)}{entry.written_by ? `, ${entry.written_by}` : ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className="hint">No own rates: the role's rates apply.</p>
          )}
        </>
      )}
      {isAdmin && !draft && explanation && (
        <button type="button" onClick={() => { setMessage(null); setDraft(emptyDraft()); }}>Set own rates</button>
      )}
      {isAdmin && draft && (
        <form className="override-form" onSubmit={save} aria-labelledby={`${ids.form}-title`}>
          <h4 id={`${ids.form}-title`}>Own rates of {member.name} (per {unit})</h4>
          {RATES.map(({ key, label }) => (
            <div key={key} className="override-rate">
              <label htmlFor={`${ids.form}-${key}`}>{label}</label>
              <input
                id={`${ids.form}-${key}`}
                inputMode="decimal"
                value={draft[key].text}
                disabled={draft[key].useRole}
                placeholder="keep"
                aria-invalid={message?.error && message.field === key ? true : undefined}
                onChange={(e) => edit(key, { text: e.target.value })}
              />
              <label className="inline">
                <input type="checkbox" checked={draft[key].useRole} onChange={(e) => edit(key, { useRole: e.target.checked })} /> the role's {label.toLowerCase()}
              </label>
            </div>
          ))}
          <p className="hint">Empty: the member's own rate in force on that day is kept.</p>
          <div className="override-rate">
            <label htmlFor={`${ids.form}-from`}>Effective from</label>
            <input
              id={`${ids.form}-from`}
              type="date"
              value={draft.effectiveFrom}
              aria-invalid={message?.error && message.field === 'effective_from' ? true : undefined}
              onChange={(e) => { setDraft({ ...draft, effectiveFrom: e.target.value }); setPreview(null); }}
            />
          </div>
          <div className="actions">
            <button type="button" onClick={dryRun}>Preview</button>
            <button type="submit">Save own rates</button>
            <button type="button" onClick={() => { setDraft(null); setPreview(null); setMessage(null); }}>Cancel</button>
          </div>
          {preview && (
            <table className="rate-preview" aria-label={`Rates of ${member.name} on ${preview.date}, before and after`}>
              <caption>On {preview.date}, if saved</caption>
              <thead>
                <tr><th scope="col" /><th scope="col" className="num">Before</th><th scope="col" className="num">After</th></tr>
              </thead>
              <tbody>
                {RATES.map(({ key, label }) => (
                  <tr key={key} data-rate={key} className={sameRate(preview.before[key], preview.after[key]) ? undefined : 'changed'}>
                    <th scope="row">{label}</th>
                    <td className="num">{money(preview.before[key].amount)} ({preview.before[key].source})</td>
                    <td className="num">{money(preview.after[key].amount)} ({preview.after[key].source})</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </form>
      )}
      {!isAdmin && <p className="hint">Only admins set a member's own rates.</p>}
      {message && <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : 'ok'}>{message.text}</p>}
    </section>
  );
}

const sameRate = (a: ResolvedRate, b: ResolvedRate) => a.source === b.source && Number(a.amount) === Number(b.amount);

const SOURCES = { member: 'the member\'s own rate', role: 'the role\'s rate', none: 'no rate: counts as 0' } as const;

function ResolvedRateItem({ label, rate, rateKey, unit, money, role }: { label: string; rate: ResolvedRate; rateKey: RateKey; unit: string; money: (v: Decimal) => string; role: string | null }) {
  const why = rate.source === 'role' && role ? `${role}'s rate` : SOURCES[rate.source];
  return (
    <>
      <dt>{label}</dt>
      <dd data-rate={rateKey} data-source={rate.source}>
        {money(rate.amount)} per {unit}: {why}
        {rate.effective_from ? `, since ${rate.effective_from}` : ''}
      </dd>
    </>
  );
}
