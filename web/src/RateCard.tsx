import { FormEvent, useEffect, useState } from 'react';
import { Api, ApiError, RateCard, explain } from './api';
import { formatMoney } from './format';

const byName = (card: RateCard): RateCard => ({ ...card, roles: [...card.roles].sort((a, b) => a.job_role_name.localeCompare(b.job_role_name)) });

type Props = { api: Api; projectId: string; isAdmin: boolean; onSaved: () => void; onError: (err: unknown) => void };

/** The project's hourly rates per job role: read-only, editable by admins (PUT replaces the card). */
export function RateCardSection({ api, projectId, isAdmin, onSaved, onError }: Props) {
  const [card, setCard] = useState<RateCard | null>(null);
  const [draft, setDraft] = useState<Record<string, string> | null>(null);
  const [message, setMessage] = useState<{ error: boolean; text: string; field?: string } | null>(null);

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

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft) return;
    const bad = card.roles.find((r) => !/^\d+(\.\d+)?$/.test((draft[r.job_role_id] ?? '').trim()));
    if (bad) {
      setMessage({ error: true, field: bad.job_role_id, text: `Enter a rate of 0 or more for ${bad.job_role_name}` });
      return;
    }
    try {
      const roles = card.roles.map((r) => ({ job_role_id: r.job_role_id, hourly_rate: Number((draft[r.job_role_id] ?? '').trim()) }));
      const reply = await api.json<RateCard>(`/projects/${projectId}/rate-card`, { method: 'PUT', body: { roles } });
      setCard(byName(reply.body));
      setDraft(null);
      setMessage({ error: false, text: 'Rate card saved; the figures are updated.' });
      onSaved();
    } catch (err) {
      const field = err instanceof ApiError ? err.details[0]?.path : undefined;
      setMessage({ error: true, text: explain(err), field });
    }
  };

  return (
    <section className="rate-card" aria-labelledby="rate-card-title">
      <h2 id="rate-card-title">Rate card ({card.currency})</h2>
      {card.roles.length === 0 && <p className="empty">No rates set for this project.</p>}
      {card.roles.length > 0 && (
        <form onSubmit={save}>
          <table>
            <thead>
              <tr>
                <th scope="col">Job role</th>
                <th scope="col" className="num">Hourly rate</th>
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
                      formatMoney(role.hourly_rate, card.currency)
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {isAdmin && !draft && (
            <button type="button" onClick={() => { setMessage(null); setDraft(Object.fromEntries(card.roles.map((r) => [r.job_role_id, String(r.hourly_rate)]))); }}>
              Edit rates
            </button>
          )}
          {draft && (
            <div className="actions">
              <button type="submit">Save rates</button>
              <button type="button" onClick={() => { setDraft(null); setMessage(null); }}>Cancel</button>
            </div>
          )}
          {!isAdmin && <p className="hint">Only admins change the rate card.</p>}
          {message && <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : 'ok'}>{message.text}</p>}
        </form>
      )}
    </section>
  );
}
