import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { useMutation, useQuery, type CombinedError } from 'urql';
import { useAuth } from '../app/auth';
import { downloadExport } from '../app/download';
import { useI18n } from '../app/i18n';
import { useIdempotentMutation } from '../app/idempotent';
import { useCursorPager } from '../app/pager';
import { useFormat, useViewer } from '../app/viewer';
import { StatusBadge } from '../components/Badge';
import { ConfirmButton } from '../components/Confirm';
import { DataTable } from '../components/DataTable';
import { Card, Field, PageHeader } from '../components/Page';
import { Alert, useErrorText } from '../components/States';
import { useWorth } from '../components/Worth';
import { graphql } from '../gql';
import type { CampaignsQuery, IssueCouponsMutation } from '../gql/graphql';
import { formatCouponCode } from '../lib/code';
import { formatMinutes, localInputToUtc, utcToLocalInput } from '../lib/dates';
import { conflictOf, errorTextIn } from '../lib/errors';
import { attemptKey } from '../lib/requestId';

export const CampaignsDocument = graphql(`
  query Campaigns($first: Int, $after: String) {
    campaigns(first: $first, after: $after) {
      edges {
        cursor
        node {
          id
          name
          type
          value
          maxDiscount
          minSpend
          validFrom
          validTo
          totalQuantity
          issued
          reissued
          perCustomerLimit
          refundWindowMinutes
          state
          version
          codeSource
          createdAt
          stores {
            id
            name
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const IssueCouponsDocument = graphql(`
  mutation IssueCoupons($input: IssueCouponsInput!) {
    issueCoupons(input: $input) {
      issued
      codes
      campaign {
        id
        issued
        totalQuantity
        version
      }
    }
  }
`);

const UpdateCampaignDocument = graphql(`
  mutation UpdateCampaign($input: UpdateCampaignInput!) {
    updateCampaign(input: $input) {
      id
      name
      validTo
      totalQuantity
      refundWindowMinutes
      state
      version
    }
  }
`);

const PauseCampaignDocument = graphql(`
  mutation PauseCampaign($input: CampaignVersionInput!) {
    pauseCampaign(input: $input) {
      id
      name
      state
      version
    }
  }
`);

const ResumeCampaignDocument = graphql(`
  mutation ResumeCampaign($input: CampaignVersionInput!) {
    resumeCampaign(input: $input) {
      id
      name
      state
      version
    }
  }
`);

const EndCampaignDocument = graphql(`
  mutation EndCampaign($input: CampaignVersionInput!) {
    endCampaign(input: $input) {
      id
      name
      validTo
      state
      version
    }
  }
`);

type Row = CampaignsQuery['campaigns']['edges'][number]['node'];
const col = createColumnHelper<Row>();
const PAGE = 20;

function IssuePanel({ campaign, onClose }: { campaign: Row; onClose: () => void }) {
  const { t } = useI18n();
  const errorText = useErrorText();
  const [count, setCount] = useState('100');
  const [customers, setCustomers] = useState('');
  const [outcome, setOutcome] = useState<{ ok?: IssueCouponsMutation['issueCoupons']; error?: string } | null>(null);
  const { fetching, run, retry, clearRetry } = useIdempotentMutation(IssueCouponsDocument);
  useEffect(clearRetry, [count, customers, clearRetry]);
  const remaining = campaign.totalQuantity - campaign.issued;

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const refs = customers
      .split(/\r?\n/)
      .map((s) => s.trim())
      .filter(Boolean);
    const n = Number(count);
    if (!refs.length && (!Number.isInteger(n) || n < 1)) {
      setOutcome({ error: t('create.bad.quantity') });
      return;
    }
    const input = { campaignId: campaign.id, count: refs.length ? undefined : n, customerRefs: refs.length ? refs : undefined };
    // The same batch retried after no answer keeps its request id: the server
    // then answers with the codes it issued the first time instead of issuing twice.
    const res = await run(attemptKey(JSON.stringify(input)), (requestId) => ({ input: { ...input, requestId } }), {
      additionalTypenames: ['Campaign', 'Coupon'],
    });
    if (res.data) setOutcome({ ok: res.data.issueCoupons });
    else setOutcome({ error: errorText(res.error) + (res.retry ? ` ${t('common.retryNote')}` : '') });
  }

  return (
    <Card
      title={t('campaigns.issueTitle', { name: campaign.name })}
      actions={
        <button type="button" className="btn btn-ghost btn-small" onClick={onClose}>
          {t('common.close')}
        </button>
      }
      className="issue-panel"
    >
      <form className="form-row" onSubmit={submit} data-testid="issue-form">
        <Field label={t('campaigns.issueCount')} hint={t('campaigns.remaining', { n: remaining })}>
          <input name="count" type="number" min={1} max={Math.max(remaining, 1)} value={count} onChange={(e) => setCount(e.target.value)} />
        </Field>
        <Field label={t('campaigns.issueCustomers')}>
          <textarea name="customers" rows={2} value={customers} onChange={(e) => setCustomers(e.target.value)} />
        </Field>
        <div className="form-actions">
          <button type="submit" className="btn btn-primary" disabled={fetching}>
            {fetching ? t('campaigns.issuing') : retry ? t('common.retrySame') : t('campaigns.issueSubmit')}
          </button>
        </div>
      </form>
      {outcome?.error && <Alert kind="error">{outcome.error}</Alert>}
      {outcome?.ok && (
        <Alert
          kind="success"
          title={t('campaigns.issuedOk', { n: outcome.ok.issued, issued: outcome.ok.campaign.issued, total: outcome.ok.campaign.totalQuantity })}
        >
          <div className="code-list" data-testid="issued-codes">
            <span className="muted">{t('campaigns.firstCodes')}:</span>{' '}
            {outcome.ok.codes.slice(0, 6).map((c) => (
              <Link key={c} className="mono link" to={`/coupons/${c}`}>
                {formatCouponCode(c)}
              </Link>
            ))}
          </div>
        </Alert>
      )}
    </Card>
  );
}

/** Problem is what went wrong with a change of a campaign: a version conflict, or other words. */
type Problem = { conflict: { mine: number; current: number | null } } | { text: string };

/** problemOf turns a failed campaign change into a Problem; CONFLICT is told apart, to offer a reload. */
function useProblemOf() {
  const { locale } = useI18n();
  return (error: CombinedError | undefined, mine: number): Problem => {
    const c = conflictOf(error);
    if (c) return { conflict: { mine, current: c.currentVersion } };
    return { text: errorTextIn(locale, 'campaign.error', error) };
  };
}

/** ProblemAlert shows a Problem; a conflict says someone changed the campaign and offers a reload. */
function ProblemAlert({ problem, onReload }: { problem: Problem; onReload: () => void }) {
  const { t } = useI18n();
  if ('text' in problem) return <Alert kind="error">{problem.text}</Alert>;
  return (
    <div data-testid="campaign-conflict">
      <Alert kind="warning" title={t('campaigns.conflict')}>
        {problem.conflict.current !== null && t('campaigns.conflictDetail', { mine: problem.conflict.mine, current: problem.conflict.current })}
        <div className="panel-actions">
          <button type="button" className="btn btn-small btn-primary" data-testid="campaign-reload" onClick={onReload}>
            ↻ {t('campaigns.reload')}
          </button>
        </div>
      </Alert>
    </div>
  );
}

/**
 * EditPanel changes a campaign's name, end, total quantity and refund window at
 * the version it was loaded at; the page re-creates it (key) when a reload
 * brings a newer version, so the form then shows what is current.
 */
function EditPanel({ campaign, onClose, onReload, onSaved }: { campaign: Row; onClose: () => void; onReload: () => void; onSaved: (text: string) => void }) {
  const { t } = useI18n();
  const fmt = useFormat();
  const problemOf = useProblemOf();
  const [name, setName] = useState(campaign.name);
  const [validTo, setValidTo] = useState(utcToLocalInput(new Date(campaign.validTo), fmt.timezone));
  const [total, setTotal] = useState(String(campaign.totalQuantity));
  const [refundWindow, setRefundWindow] = useState(String(campaign.refundWindowMinutes));
  const [problem, setProblem] = useState<Problem | null>(null);
  const [{ fetching }, update] = useMutation(UpdateCampaignDocument);
  const wholeNumber = (v: string, min: number) => /^\d+$/.test(v.trim()) && Number(v) >= min && Number(v) <= 2_147_483_647;

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setProblem(null);
    const n = name.trim();
    if (!n || n.length > 100) return setProblem({ text: t('create.bad.name') });
    const end = localInputToUtc(validTo, fmt.timezone);
    if (!end) return setProblem({ text: t('create.bad.dates') });
    if (!wholeNumber(total, 1)) return setProblem({ text: t('create.bad.quantity') });
    if (!wholeNumber(refundWindow, 0)) return setProblem({ text: t('create.bad.int') });
    const oldEnd = utcToLocalInput(new Date(campaign.validTo), fmt.timezone);
    const input = {
      id: campaign.id,
      version: campaign.version,
      name: n !== campaign.name ? n : undefined,
      validTo: validTo !== oldEnd ? end.toISOString() : undefined,
      totalQuantity: Number(total) !== campaign.totalQuantity ? Number(total) : undefined,
      refundWindowMinutes: Number(refundWindow) !== campaign.refundWindowMinutes ? Number(refundWindow) : undefined,
    };
    if (input.name === undefined && input.validTo === undefined && input.totalQuantity === undefined && input.refundWindowMinutes === undefined) {
      return setProblem({ text: t('campaigns.noChange') });
    }
    const res = await update({ input }, { additionalTypenames: ['Campaign'] });
    if (res.data) onSaved(t('campaigns.saved', { name: res.data.updateCampaign.name, version: res.data.updateCampaign.version }));
    else setProblem(problemOf(res.error, campaign.version));
  }

  return (
    <Card
      title={t('campaigns.editTitle', { name: campaign.name })}
      actions={
        <button type="button" className="btn btn-ghost btn-small" onClick={onClose}>
          {t('common.close')}
        </button>
      }
      className="edit-panel"
    >
      <p className="muted small">{t('campaigns.editHint', { version: campaign.version })}</p>
      <form className="form-grid" onSubmit={submit} data-testid="edit-campaign" data-version={campaign.version} noValidate>
        <Field label={t('create.name')}>
          <input name="name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label={t('create.validTo')} hint={t('create.timesIn', { tz: fmt.timezone })}>
          <input name="validTo" type="datetime-local" value={validTo} onChange={(e) => setValidTo(e.target.value)} />
        </Field>
        <Field label={t('create.quantity')} hint={`${t('campaigns.issued')}: ${campaign.issued.toLocaleString()}`}>
          <input name="totalQuantity" inputMode="numeric" value={total} onChange={(e) => setTotal(e.target.value)} />
        </Field>
        <Field label={t('create.refundWindow')}>
          <input name="refundWindowMinutes" inputMode="numeric" value={refundWindow} onChange={(e) => setRefundWindow(e.target.value)} />
        </Field>
        <div className="form-actions field-wide">
          {problem && <ProblemAlert problem={problem} onReload={onReload} />}
          <button type="submit" className="btn btn-primary" disabled={fetching} data-testid="save-campaign">
            {fetching ? t('campaigns.saving') : t('common.save')}
          </button>
        </div>
      </form>
    </Card>
  );
}

export function CampaignsPage() {
  const { t, locale } = useI18n();
  const { role } = useViewer();
  const { token } = useAuth();
  const fmt = useFormat();
  const worth = useWorth();
  const location = useLocation();
  const created = (location.state as { created?: string } | null)?.created;
  const pager = useCursorPager('all');
  const [res, reexecute] = useQuery({ query: CampaignsDocument, variables: { first: PAGE, after: pager.after } });
  const [issuing, setIssuing] = useState<Row | null>(null);
  // The edit form keeps the campaign as it was when opened, version included:
  // a refresh of the list must not move the version under the person editing.
  // Only Reload takes the current version (and values) into the form.
  const [editing, setEditing] = useState<Row | null>(null);
  const [reloading, setReloading] = useState<{ id: string; before: unknown } | null>(null);
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [downloading, setDownloading] = useState<string | null>(null);
  const problemOf = useProblemOf();
  const [{ fetching: pausing }, pause] = useMutation(PauseCampaignDocument);
  const [{ fetching: resuming }, resume] = useMutation(ResumeCampaignDocument);
  const [{ fetching: ending }, end] = useMutation(EndCampaignDocument);
  const changing = pausing || resuming || ending;

  function reload() {
    setProblem(null);
    if (editing) setReloading({ id: editing.id, before: res.data });
    reexecute({ requestPolicy: 'network-only' });
  }

  /** act pauses, resumes or ends a campaign at the version on screen. */
  async function act(c: Row, action: 'pause' | 'resume' | 'end') {
    setNote(null);
    setProblem(null);
    if (action !== 'resume' && issuing?.id === c.id) setIssuing(null); // a paused or ended campaign issues nothing
    const vars = { input: { id: c.id, version: c.version } };
    const ctx = { additionalTypenames: ['Campaign'] };
    const res = action === 'pause' ? await pause(vars, ctx) : action === 'resume' ? await resume(vars, ctx) : await end(vars, ctx);
    const done = res.data && ('pauseCampaign' in res.data ? res.data.pauseCampaign : 'resumeCampaign' in res.data ? res.data.resumeCampaign : res.data.endCampaign);
    if (done) setNote({ kind: 'success', text: t(action === 'pause' ? 'campaigns.paused' : action === 'resume' ? 'campaigns.resumed' : 'campaigns.ended', { name: done.name }) });
    else setProblem(problemOf(res.error, c.version));
  }

  async function downloadCodes(c: Row) {
    setDownloading(c.id);
    setNote(null);
    const file = `coupons-${c.id}.csv`;
    try {
      const lang = locale === 'zh-CN' ? '&lang=zh' : '';
      await downloadExport(token!, `/export/coupons.csv?campaignId=${encodeURIComponent(c.id)}${lang}`, file);
      setNote({ kind: 'success', text: t('common.exported', { file }) });
    } catch (e) {
      setNote({ kind: 'error', text: t('common.exportFailed', { msg: (e as Error).message }) });
    } finally {
      setDownloading(null);
    }
  }

  const columns = useMemo(
    () => [
      col.accessor('name', {
        header: t('campaigns.name'),
        cell: (c) => (
          <div>
            <div className="strong">{c.getValue()}</div>
            <div className="cell-note">
              {t(`type.${c.row.original.type}`)}
              {c.row.original.codeSource === 'IMPORTED' && ` · ${t('campaigns.imported')}`}
            </div>
          </div>
        ),
      }),
      col.accessor('state', {
        header: t('campaigns.state'),
        cell: (c) => (
          <div>
            <StatusBadge status={c.getValue()} />
            <div className="cell-note" data-testid="campaign-version">
              {t('campaigns.version')} {c.row.original.version}
            </div>
          </div>
        ),
      }),
      col.display({ id: 'worth', header: t('campaigns.value'), cell: (c) => worth(c.row.original) }),
      col.display({
        id: 'validity',
        header: t('campaigns.validity'),
        cell: (c) => (
          <span className="nowrap small">
            {fmt.dateTimeShort(c.row.original.validFrom)}
            <br />
            {fmt.dateTimeShort(c.row.original.validTo)}
          </span>
        ),
      }),
      col.accessor('stores', {
        header: t('campaigns.stores'),
        cell: (c) => (c.getValue().length ? c.getValue().map((s) => s.name).join(', ') : <span className="muted">{t('campaigns.allStores')}</span>),
      }),
      col.display({
        id: 'issued',
        header: t('campaigns.issued'),
        cell: (c) => {
          const r = c.row.original;
          const pct = r.totalQuantity ? Math.min(100, (r.issued / r.totalQuantity) * 100) : 0;
          return (
            <div className="progress-cell">
              <div className="num">
                {r.issued.toLocaleString()} / {r.totalQuantity.toLocaleString()}
              </div>
              <div className="progress">
                <div className="progress-bar" style={{ width: `${pct}%` }} />
              </div>
              {r.reissued > 0 && <div className="cell-note">{t('campaigns.reissued', { n: r.reissued })}</div>}
            </div>
          );
        },
      }),
      col.accessor('refundWindowMinutes', {
        header: t('campaigns.refundWindow'),
        cell: (c) => (c.getValue() > 0 ? formatMinutes(c.getValue(), locale) : <span className="muted">{t('campaigns.noRefund')}</span>),
      }),
      col.display({
        id: 'actions',
        header: t('common.actions'),
        cell: (c) => (
          <div className="row-actions">
            {role === 'ADMIN' && c.row.original.state === 'ACTIVE' && c.row.original.codeSource === 'GENERATED' && (
              <button type="button" className="btn btn-small" data-testid={`issue-${c.row.original.id}`} onClick={() => setIssuing(c.row.original)}>
                {t('campaigns.issue')}
              </button>
            )}
            {role === 'ADMIN' && c.row.original.state === 'ACTIVE' && c.row.original.codeSource === 'IMPORTED' && (
              <Link className="btn btn-small" data-testid={`import-${c.row.original.id}`} to={`/campaigns/${c.row.original.id}/import`}>
                ↑ {t('campaigns.import')}
              </Link>
            )}
            {role === 'ADMIN' && c.row.original.state !== 'ENDED' && (
              <>
                <button type="button" className="btn btn-small" data-testid="edit-campaign-open" onClick={() => { setIssuing(null); setEditing(c.row.original); }}>
                  {t('campaigns.edit')}
                </button>
                {c.row.original.state === 'ACTIVE' ? (
                  <button type="button" className="btn btn-small" data-testid="pause-campaign" disabled={changing} onClick={() => act(c.row.original, 'pause')}>
                    ❚❚ {t('campaigns.pause')}
                  </button>
                ) : (
                  <button type="button" className="btn btn-small" data-testid="resume-campaign" disabled={changing} onClick={() => act(c.row.original, 'resume')}>
                    ▶ {t('campaigns.resume')}
                  </button>
                )}
                <ConfirmButton
                  small
                  danger
                  testId="end-campaign"
                  disabled={changing}
                  label={t('campaigns.end')}
                  question={t('campaigns.endConfirm', { name: c.row.original.name })}
                  confirmLabel={t('campaigns.endYes')}
                  onConfirm={() => act(c.row.original, 'end')}
                />
              </>
            )}
            <button type="button" className="btn btn-small btn-ghost" disabled={downloading === c.row.original.id} onClick={() => downloadCodes(c.row.original)}>
              ↓ {downloading === c.row.original.id ? t('common.exporting') : t('campaigns.downloadCodes')}
            </button>
          </div>
        ),
      }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, fmt, role, downloading, worth, locale, changing, issuing],
  );
  const rows = res.data?.campaigns.edges.map((e) => e.node);
  const pageInfo = res.data?.campaigns.pageInfo;
  useEffect(() => {
    // Wait for the answer of the reload, not the list on screen when it was asked for.
    if (!reloading || res.fetching || res.data === reloading.before) return;
    const fresh = res.data?.campaigns.edges.find((e) => e.node.id === reloading.id)?.node;
    setReloading(null);
    setEditing(fresh && fresh.state !== 'ENDED' ? fresh : null);
  }, [reloading, res.data, res.fetching]);
  return (
    <>
      <PageHeader
        title={t('campaigns.title')}
        subtitle={t('common.timezone', { tz: fmt.timezone })}
        actions={
          role === 'ADMIN' && (
            <Link to="/campaigns/new" className="btn btn-primary" data-testid="new-campaign">
              + {t('campaigns.new')}
            </Link>
          )
        }
      />
      {created && <Alert kind="success">{t('create.created', { name: created })}</Alert>}
      {note && <Alert kind={note.kind}>{note.text}</Alert>}
      {problem && <ProblemAlert problem={problem} onReload={reload} />}
      {issuing && <IssuePanel campaign={issuing} onClose={() => setIssuing(null)} />}
      {editing && (
        <EditPanel
          key={`${editing.id}@${editing.version}`}
          campaign={editing}
          onClose={() => setEditing(null)}
          onReload={reload}
          onSaved={(text) => {
            setEditing(null);
            setNote({ kind: 'success', text });
          }}
        />
      )}
      <Card>
        <DataTable
          testId="campaigns-table"
          columns={columns}
          data={rows}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('campaigns.empty')}
          rowKey={(r) => r.id}
          pager={{
            page: pager.page,
            hasPrev: pager.hasPrev,
            hasNext: !!pageInfo?.hasNextPage,
            onPrev: pager.prev,
            onNext: () => pager.next(pageInfo?.endCursor),
          }}
        />
      </Card>
    </>
  );
}
