import { FormEvent, useCallback, useEffect, useId, useMemo, useState } from 'react';
import { Api, ApiError, BillableFilter, GroupBy, Project, RateCardHistory, Session, TaskList, explain, listQuery } from './api';
import { BreakdownPanel } from './Breakdown';
import { BudgetSection } from './Budget';
import { EventsSection } from './Events';
import { FeedFollower } from './feed';
import { RateCardSection } from './RateCard';
import { TaskTable } from './TaskTable';

const TOKEN_KEY = 'finance-screen.token';

/** The token lives in sessionStorage: gone when the browser session ends, never in a cookie or the URL. */
export function App() {
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(TOKEN_KEY));
  const [session, setSession] = useState<Session | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const api = useMemo(() => (token ? new Api(token) : null), [token]);

  const signOut = useCallback((message: string | null) => {
    sessionStorage.removeItem(TOKEN_KEY);
    setToken(null);
    setSession(null);
    setNotice(message);
  }, []);

  useEffect(() => {
    if (!api) return;
    let live = true;
    api
      .json<Session>('/session')
      .then((reply) => live && setSession(reply.body))
      .catch((err: unknown) => live && signOut(explain(err)));
    return () => {
      live = false;
    };
  }, [api, signOut]);

  if (!api) {
    return (
      <SignIn
        notice={notice}
        onToken={(value) => {
          sessionStorage.setItem(TOKEN_KEY, value);
          setNotice(null);
          setToken(value);
        }}
      />
    );
  }
  if (!session) return <main className="page"><p role="status">Signing in…</p></main>;
  return <Screen api={api} session={session} onSignOut={signOut} />;
}

function SignIn({ notice, onToken }: { notice: string | null; onToken: (token: string) => void }) {
  const [value, setValue] = useState('');
  const inputId = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (value.trim()) onToken(value.trim());
  };
  return (
    <main className="page sign-in">
      <h1>Project finance</h1>
      <form onSubmit={submit} aria-describedby={`${inputId}-help`}>
        <label htmlFor={inputId}>API token</label>
        <input id={inputId} type="password" autoComplete="off" autoFocus value={value} onChange={(e) => setValue(e.target.value)} required />
        <p id={`${inputId}-help`} className="hint">
          Paste the token that <code>npm start</code> printed (or one from <code>npm run token</code>). It is kept for this browser session only.
        </p>
        {notice && <p role="alert" className="error">{notice}</p>}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

function Screen({ api, session, onSignOut }: { api: Api; session: Session; onSignOut: (message: string | null) => void }) {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [projectId, setProjectId] = useState<string>('');
  const [filter, setFilter] = useState<BillableFilter>('all');
  const [groupBy, setGroupBy] = useState<GroupBy>('');
  const [list, setList] = useState<TaskList | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [revision, setRevision] = useState(0);
  const [selected, setSelected] = useState<{ id: string; withSubtasks: boolean } | null>(null);
  /** The revenue toggle as the user set it for this project; null: by whether the project bills anything. */
  const [revenueChoice, setRevenueChoice] = useState<boolean | null>(null);
  const [billRated, setBillRated] = useState<{ projectId: string; any: boolean } | null>(null);

  const fail = useCallback(
    (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) onSignOut(explain(err));
      else setError(explain(err));
    },
    [onSignOut],
  );

  useEffect(() => {
    api
      .json<Project[]>('/projects')
      .then((reply) => {
        setProjects(reply.body);
        if (reply.body.length === 1 && reply.body[0]) setProjectId(reply.body[0].id);
      })
      .catch(fail);
  }, []);

  useEffect(() => {
    if (!projectId) return;
    let live = true;
    // Another project's list is never shown, not even while this one loads.
    setList((shown) => (shown && shown.project.id === projectId ? shown : null));
    setLoading(true);
    setError(null);
    api
      .json<TaskList>(`/project-finance/project/${projectId}/tasks?${listQuery(filter, groupBy)}`)
      .then((reply) => live && setList(reply.body))
      .catch((err: unknown) => live && fail(err))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [projectId, filter, groupBy, revision]);

  // Whether the project bills anything: a bill rate in its card's history (or, for members' own bill
  // rates, revenue in its totals). A project that bills nothing has the revenue columns off at first.
  useEffect(() => {
    if (!projectId) return;
    let live = true;
    api
      .json<RateCardHistory>(`/projects/${projectId}/rate-card/history`)
      .then((reply) => live && setBillRated({ projectId, any: reply.body.entries.some((e) => e.bill_rate !== undefined && e.bill_rate !== null) }))
      .catch((err: unknown) => live && fail(err));
    return () => {
      live = false;
    };
  }, [projectId, revision]);
  const totals = list?.project.id === projectId ? list.totals : undefined;
  const hasRevenue = totals?.actual_revenue !== undefined;
  const earns = (value: unknown) => value !== undefined && Number(value) !== 0;
  const bills = (billRated?.projectId === projectId && billRated.any) || earns(totals?.actual_revenue) || earns(totals?.estimated_revenue);
  const showRevenue = hasRevenue && (revenueChoice ?? bills);

  const canEdit = session.role !== 'viewer';
  // One follower of the team's feed for the session: switching projects reads nothing twice.
  const feed = useMemo(() => new FeedFollower(api), [api]);
  const taskNames = useMemo(() => new Map((list?.tasks ?? []).map((t) => [t.id, t.name])), [list]);
  const ids = { project: useId(), filter: useId(), group: useId() };

  return (
    <div className={selected ? 'layout panel-open' : 'layout'}>
      <header className="top">
        <h1>Project finance</h1>
        <p className="who">
          {session.team.name} · <span data-testid="role">{session.role}</span>
        </p>
        <button type="button" onClick={() => onSignOut('Signed out.')}>Sign out</button>
      </header>
      <main className="page" id="main">
        <section aria-label="Choose what to show" className="controls">
          <div className="field">
            <label htmlFor={ids.project}>Project</label>
            <select id={ids.project} value={projectId} onChange={(e) => {
                if (e.target.value === projectId) return;
                setProjectId(e.target.value);
                setSelected(null);
                setRevenueChoice(null);
              }} disabled={!projects}>
              <option value="">{projects ? (projects.length ? 'Choose a project…' : 'No projects yet') : 'Loading projects…'}</option>
              {projects?.map((p) => (
                <option key={p.id} value={p.id}>{p.name} ({p.currency})</option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.filter}>Billable</label>
            <select id={ids.filter} value={filter} onChange={(e) => setFilter(e.target.value as BillableFilter)} disabled={!projectId}>
              <option value="all">All tasks</option>
              <option value="billable">Billable</option>
              <option value="non-billable">Non-billable</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.group}>Group by</label>
            <select id={ids.group} value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)} disabled={!projectId}>
              <option value="">No grouping</option>
              <option value="status">Status</option>
              <option value="priority">Priority</option>
              <option value="phase">Phase</option>
            </select>
          </div>
          {hasRevenue && (
            <div className="field toggle">
              <label>
                <input type="checkbox" checked={showRevenue} onChange={(e) => setRevenueChoice(e.target.checked)} /> Revenue and margin
              </label>
              {!bills && <span className="hint">This project bills nothing</span>}
            </div>
          )}
          {projectId && (
            <button type="button" onClick={() => setRevision((r) => r + 1)} disabled={loading}>
              Refresh
            </button>
          )}
          {projectId && <Exports api={api} projectId={projectId} filter={filter} onError={fail} />}
        </section>
        {error && <p role="alert" className="error">{error}</p>}
        {!projectId && projects && projects.length > 0 && <p className="empty">Choose a project to see its tasks.</p>}
        {projectId && <BudgetSection key={projectId} api={api} projectId={projectId} revision={revision} onError={fail} />}
        {projectId && loading && !list && <p role="status">Loading tasks…</p>}
        {projectId && list && (
          <TaskTable
            key={`${projectId}|${filter}|${groupBy}`}
            api={api}
            list={list}
            filter={filter}
            groupBy={groupBy}
            revision={revision}
            canEdit={canEdit}
            loading={loading}
            showRevenue={showRevenue}
            onOpen={(id, withSubtasks) => setSelected({ id, withSubtasks })}
            onSaved={() => setRevision((r) => r + 1)}
            onError={fail}
          />
        )}
        {projectId && list && (
          <div className="below">
            <RateCardSection api={api} projectId={projectId} isAdmin={session.role === 'admin'} onSaved={() => setRevision((r) => r + 1)} onError={fail} />
            <EventsSection api={api} feed={feed} projectId={projectId} currency={list.project.currency} taskNames={taskNames} revision={revision} onError={fail} />
          </div>
        )}
      </main>
      {selected && list && (
        <BreakdownPanel
          api={api}
          projectId={projectId}
          isAdmin={session.role === 'admin'}
          onSaved={() => setRevision((r) => r + 1)}
          taskId={selected.id}
          withSubtasks={selected.withSubtasks}
          currency={list.project.currency}
          revision={revision}
          onClose={() => setSelected(null)}
          onError={fail}
        />
      )}
    </div>
  );
}

function Exports({ api, projectId, filter, onError }: { api: Api; projectId: string; filter: BillableFilter; onError: (err: unknown) => void }) {
  const [busy, setBusy] = useState<string | null>(null);
  const download = async (format: 'csv' | 'xlsx') => {
    setBusy(format);
    try {
      const { blob, fileName } = await api.file(`/project-finance/project/${projectId}/export?format=${format}&billable_filter=${filter}`);
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = fileName;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      onError(err);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="exports" role="group" aria-label="Export the task list">
      <button type="button" onClick={() => download('csv')} disabled={busy !== null}>{busy === 'csv' ? 'Exporting…' : 'Export CSV'}</button>
      <button type="button" onClick={() => download('xlsx')} disabled={busy !== null}>{busy === 'xlsx' ? 'Exporting…' : 'Export XLSX'}</button>
    </div>
  );
}
