import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { useAuth } from '../app/auth';
import { downloadExport } from '../app/download';
import { useI18n } from '../app/i18n';
import { useCursorPager } from '../app/pager';
import { useFormat, useViewer } from '../app/viewer';
import { DataTable } from '../components/DataTable';
import { Card, Field, PageHeader } from '../components/Page';
import { Alert, useErrorText } from '../components/States';
import { useWorth } from '../components/Worth';
import { graphql } from '../gql';
import type { CampaignsQuery, IssueCouponsMutation } from '../gql/graphql';
import { formatCouponCode } from '../lib/code';
import { formatMinutes } from '../lib/dates';

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
      }
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
  const [{ fetching }, issue] = useMutation(IssueCouponsDocument);
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
    const res = await issue(
      { input: { campaignId: campaign.id, count: refs.length ? undefined : n, customerRefs: refs.length ? refs : undefined } },
      { additionalTypenames: ['Campaign', 'Coupon'] },
    );
    if (res.data) setOutcome({ ok: res.data.issueCoupons });
    else setOutcome({ error: errorText(res.error) });
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
            {fetching ? t('campaigns.issuing') : t('campaigns.issueSubmit')}
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
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [downloading, setDownloading] = useState<string | null>(null);

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
            <div className="cell-note">{t(`type.${c.row.original.type}`)}</div>
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
            {role === 'ADMIN' && (
              <button type="button" className="btn btn-small" data-testid={`issue-${c.row.original.id}`} onClick={() => setIssuing(c.row.original)}>
                {t('campaigns.issue')}
              </button>
            )}
            <button type="button" className="btn btn-small btn-ghost" disabled={downloading === c.row.original.id} onClick={() => downloadCodes(c.row.original)}>
              ↓ {downloading === c.row.original.id ? t('common.exporting') : t('campaigns.downloadCodes')}
            </button>
          </div>
        ),
      }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, fmt, role, downloading, worth, locale],
  );
  const rows = res.data?.campaigns.edges.map((e) => e.node);
  const pageInfo = res.data?.campaigns.pageInfo;
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
      {issuing && <IssuePanel campaign={issuing} onClose={() => setIssuing(null)} />}
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
