import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { useI18n } from '../app/i18n';
import { useCursorPager } from '../app/pager';
import { useFormat, useViewer } from '../app/viewer';
import { StatusBadge } from '../components/Badge';
import { DataTable } from '../components/DataTable';
import { Card, PageHeader } from '../components/Page';
import { Alert, useErrorText } from '../components/States';
import { graphql } from '../gql';
import type { JobRunsQuery, JobRunStatus } from '../gql/graphql';
import { formatDuration } from '../lib/dates';

export const JobRunsDocument = graphql(`
  query JobRuns($filter: JobRunFilter, $first: Int, $after: String) {
    jobRuns(filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        node {
          id
          job
          slot
          node
          status
          error
          startedAt
          finishedAt
          counts {
            name
            value
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
    jobs
  }
`);

const RunJobDocument = graphql(`
  mutation RunJob($input: RunJobInput!) {
    runJob(input: $input) {
      id
      job
      status
      error
      startedAt
      finishedAt
      counts {
        name
        value
      }
    }
  }
`);

const ReadReplicasDocument = graphql(`
  query ReadReplicas {
    readReplicas {
      name
      up
      serving
      error
      inRecovery
      replayPaused
      lagSeconds
    }
  }
`);

/** ReadReplicas shows the replicas the server reads lists and reports from, with their lag; nothing when there are none. */
function ReadReplicas() {
  const { t } = useI18n();
  const [res] = useQuery({ query: ReadReplicasDocument, requestPolicy: 'network-only' });
  const replicas = res.data?.readReplicas ?? [];
  if (!replicas.length) return null;
  const state = (r: (typeof replicas)[number]) =>
    !r.up ? t('jobs.replicaDown') : !r.inRecovery ? t('jobs.replicaNotReplica') : r.replayPaused ? t('jobs.replicaPaused') : t('jobs.replicaStreaming');
  return (
    <Card title={t('jobs.replicas')}>
      <p className="muted small">{t('jobs.replicasNote')}</p>
      <table className="table" data-testid="read-replicas">
        <thead>
          <tr>
            <th>{t('jobs.replica')}</th>
            <th>{t('jobs.replicaState')}</th>
            <th className="num">{t('jobs.replicaLag')}</th>
            <th>{t('jobs.replicaServing')}</th>
          </tr>
        </thead>
        <tbody>
          {replicas.map((r) => (
            <tr key={r.name}>
              <td>
                <code className="small">{r.name}</code>
              </td>
              <td className={!r.up || !r.inRecovery ? 'text-danger' : undefined}>
                {state(r)}
                {r.error && <div className="cell-note">{r.error}</div>}
              </td>
              <td className="num">{r.up ? `${r.lagSeconds.toFixed(1)} s` : '—'}</td>
              <td className={r.serving ? undefined : 'text-danger'}>
                {r.serving ? t('jobs.replicaServes') : t('jobs.replicaOut')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

type Run = JobRunsQuery['jobRuns']['edges'][number]['node'];
const col = createColumnHelper<Run>();
const PAGE = 25;
// A run ends by the server's job timeout (10 minutes), so a RUNNING row older
// than that is a run whose process died; REFRESH_MS paces the list while a
// run is going.
const JOB_TIMEOUT_MS = 10 * 60_000;
const REFRESH_MS = 5_000;
const STATUSES: JobRunStatus[] = ['RUNNING', 'SUCCEEDED', 'FAILED'];

/** Counts shows a run's named counts as small chips. */
export function Counts({ counts }: { counts: Run['counts'] }) {
  if (!counts.length) return <span className="muted">—</span>;
  return (
    <div className="counts">
      {counts.map((c) => (
        <span key={c.name} className={`count ${c.value > 0 ? 'count-nonzero' : ''}`}>
          {c.name} <b>{c.value}</b>
        </span>
      ))}
    </div>
  );
}

/** JobsPage lists job runs with status, duration and counts; an admin may run a job now. */
export function JobsPage() {
  const { t, tk } = useI18n();
  const { role } = useViewer();
  const fmt = useFormat();
  const errorText = useErrorText();
  const [params, setParams] = useSearchParams();
  const job = params.get('job') ?? '';
  const status = (params.get('status') ?? '') as JobRunStatus | '';
  const filter = { job: job || undefined, status: status || undefined };
  const pager = useCursorPager(JSON.stringify(filter));
  const [res, reexecute] = useQuery({ query: JobRunsDocument, variables: { filter, first: PAGE, after: pager.after } });
  const [{ fetching: running }, runJob] = useMutation(RunJobDocument);
  const [runningJob, setRunningJob] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<{ kind: 'success' | 'error' | 'warning'; text: string; counts?: Run['counts'] } | null>(null);
  // The run runJob returned still RUNNING: it goes on in the background,
  // and the page follows it in the list until it ends.
  const [followed, setFollowed] = useState<string | null>(null);
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  const jobName = (j: string) => tk(`job.${j}`);

  const ended = (run: Pick<Run, 'job' | 'status' | 'error' | 'counts'>) =>
    setOutcome({
      kind: run.status === 'FAILED' ? 'error' : 'success',
      text: t('jobs.ran', { job: jobName(run.job), status: tk(`status.${run.status}`) }) + (run.error ? ` ${run.error}` : ''),
      counts: run.counts,
    });

  async function run(j: string) {
    setRunningJob(j);
    setOutcome(null);
    setFollowed(null);
    const r = await runJob({ input: { job: j } }, { additionalTypenames: ['JobRun'] });
    setRunningJob(null);
    if (r.data) {
      const run = r.data.runJob;
      if (run.status === 'RUNNING') {
        setFollowed(run.id);
        setOutcome({ kind: 'warning', text: t('jobs.goesOn', { job: jobName(run.job) }) });
      } else ended(run);
      reexecute({ requestPolicy: 'network-only' });
    } else setOutcome({ kind: 'error', text: errorText(r.error) });
  }

  const columns = useMemo(
    () => [
      col.accessor('job', {
        header: t('jobs.job'),
        cell: (c) => (
          <div>
            <div className="strong">{jobName(c.getValue())}</div>
            {c.row.original.slot && <div className="cell-note">{c.row.original.slot}</div>}
          </div>
        ),
      }),
      col.accessor('status', {
        header: t('common.status'),
        cell: (c) => (
          <div>
            <StatusBadge status={c.getValue()} />
            {c.row.original.error && <div className="cell-note text-danger">{c.row.original.error}</div>}
          </div>
        ),
      }),
      col.accessor('startedAt', { header: t('jobs.started'), cell: (c) => <span className="nowrap">{fmt.dateTime(c.getValue())}</span> }),
      col.display({ id: 'duration', header: t('jobs.duration'), cell: (c) => formatDuration(c.row.original.startedAt, c.row.original.finishedAt), meta: { className: 'num' } }),
      col.accessor('counts', { header: t('jobs.counts'), cell: (c) => <Counts counts={c.getValue()} /> }),
      col.accessor('node', { header: t('jobs.node'), cell: (c) => <code className="small">{c.getValue()}</code> }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, tk, fmt],
  );
  const rows = res.data?.jobRuns.edges.map((e) => e.node);
  const pageInfo = res.data?.jobRuns.pageInfo;
  // While a run on the page is going (one that started within the job
  // timeout: an older RUNNING row is a run whose process died), the list
  // refreshes itself, and the run this page started reports how it ended.
  const going = !!rows?.some((r) => r.status === 'RUNNING' && Date.now() - Date.parse(r.startedAt) < JOB_TIMEOUT_MS);
  useEffect(() => {
    if (!going && !followed) return;
    const id = setInterval(() => reexecute({ requestPolicy: 'network-only' }), REFRESH_MS);
    return () => clearInterval(id);
  }, [going, followed, reexecute]);
  useEffect(() => {
    if (!followed) return;
    const id = setTimeout(() => setFollowed(null), JOB_TIMEOUT_MS);
    return () => clearTimeout(id);
  }, [followed]);
  useEffect(() => {
    const r = followed ? rows?.find((x) => x.id === followed) : undefined;
    if (r && r.status !== 'RUNNING') {
      setFollowed(null);
      ended(r);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [rows, followed]);
  const jobs = res.data?.jobs ?? [];
  return (
    <>
      <PageHeader title={t('jobs.title')} subtitle={t('common.timezone', { tz: fmt.timezone })} />
      {role === 'ADMIN' && jobs.length > 0 && (
        <Card title={t('jobs.runTitle')}>
          <div className="job-buttons" data-testid="run-jobs">
            {jobs.map((j) => (
              <button key={j} type="button" className="btn" disabled={running} data-job={j} onClick={() => run(j)}>
                ▶ {runningJob === j ? t('jobs.running') : `${t('jobs.runNow')}: ${jobName(j)}`}
              </button>
            ))}
          </div>
          {outcome && (
            <div className="job-outcome">
              <Alert kind={outcome.kind} title={outcome.text}>
                {outcome.counts && <Counts counts={outcome.counts} />}
              </Alert>
            </div>
          )}
        </Card>
      )}
      <Card title={t('jobs.runs')}>
        <div className="filters">
          <label className="filter">
            <span>{t('jobs.job')}</span>
            <select name="job" value={job} onChange={(e) => set('job', e.target.value)}>
              <option value="">{t('common.all')}</option>
              {jobs.map((j) => (
                <option key={j} value={j}>
                  {jobName(j)}
                </option>
              ))}
            </select>
          </label>
          <label className="filter">
            <span>{t('common.status')}</span>
            <select name="status" value={status} onChange={(e) => set('status', e.target.value)}>
              <option value="">{t('common.all')}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {t(`status.${s}`)}
                </option>
              ))}
            </select>
          </label>
          {role !== 'ADMIN' && <span className="filters-note muted">{t('jobs.adminOnly')}</span>}
        </div>
        <DataTable
          testId="jobs-table"
          columns={columns}
          data={rows}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('jobs.empty')}
          rowKey={(r) => r.id}
          pager={{ page: pager.page, hasPrev: pager.hasPrev, hasNext: !!pageInfo?.hasNextPage, onPrev: pager.prev, onNext: () => pager.next(pageInfo?.endCursor) }}
        />
      </Card>
      <ReadReplicas />
    </>
  );
}
