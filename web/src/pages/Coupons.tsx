import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { useI18n } from '../app/i18n';
import { useCursorPager } from '../app/pager';
import { useFormat, useViewer } from '../app/viewer';
import { StatusBadge } from '../components/Badge';
import { DataTable } from '../components/DataTable';
import { Card, PageHeader } from '../components/Page';
import { Alert } from '../components/States';
import { SelectFilter } from '../components/Filters';
import { graphql } from '../gql';
import type { CouponsQuery, CouponStatus } from '../gql/graphql';
import { formatCouponCode, lookupCode, searchKey } from '../lib/code';

const CouponsDocument = graphql(`
  query Coupons($filter: CouponFilter, $first: Int, $after: String) {
    coupons(filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        node {
          id
          code
          status
          version
          customerRef
          validTo
          createdAt
          campaign {
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

export const CampaignNamesDocument = graphql(`
  query CampaignNames {
    campaigns(first: 100) {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`);

const STATUSES: CouponStatus[] = ['UNUSED', 'REDEEMING', 'REDEEMED', 'REFUNDED', 'EXPIRED', 'VOIDED'];
const PAGE = 25;

type Row = CouponsQuery['coupons']['edges'][number]['node'];
const col = createColumnHelper<Row>();

/** CodeSearch opens a coupon by code, checking the code as the API would first. */
function CodeSearch() {
  const { t, tk } = useI18n();
  const navigate = useNavigate();
  const [raw, setRaw] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  function submit(e: React.FormEvent) {
    e.preventDefault();
    const n = lookupCode(raw);
    if (!n.ok) {
      setProblem(tk(`code.${n.problem}`));
      return;
    }
    setProblem(null);
    navigate(`/coupons/${n.code}`);
  }
  return (
    <form className="search-bar" onSubmit={submit} role="search">
      <input
        name="code"
        className="input-code"
        value={raw}
        onChange={(e) => setRaw(e.target.value)}
        placeholder={t('coupons.searchPlaceholder')}
        aria-label={t('coupons.search')}
        autoComplete="off"
        spellCheck={false}
        autoCapitalize="characters"
      />
      <button type="submit" className="btn btn-primary">
        {t('coupons.open')}
      </button>
      {problem && (
        <div className="search-problem">
          <Alert kind="warning">{problem}</Alert>
          {searchKey(raw) && (
            <Link to={`/coupons/${encodeURIComponent(searchKey(raw))}`} className="link-quiet">
              {searchKey(raw)} →
            </Link>
          )}
        </div>
      )}
    </form>
  );
}

export function CouponsPage() {
  const { t } = useI18n();
  const { role, stores } = useViewer();
  const fmt = useFormat();
  const [params, setParams] = useSearchParams();
  const campaignId = params.get('campaign') ?? '';
  const status = (params.get('status') ?? '') as CouponStatus | '';
  const storeId = params.get('store') ?? '';
  const pager = useCursorPager(`${campaignId}|${status}|${storeId}`);
  const [campaigns] = useQuery({ query: CampaignNamesDocument, pause: role === 'CLERK' });
  const [res, reexecute] = useQuery({
    query: CouponsDocument,
    variables: {
      filter: { campaignId: campaignId || undefined, status: status || undefined, redeemedAt: storeId || undefined },
      first: PAGE,
      after: pager.after,
    },
  });
  const setFilter = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  const columns = useMemo(
    () => [
      col.accessor('code', {
        header: t('coupons.code'),
        cell: (c) => (
          <Link to={`/coupons/${c.getValue()}`} className="mono link">
            {formatCouponCode(c.getValue())}
          </Link>
        ),
      }),
      col.accessor((r) => r.campaign.name, { id: 'campaign', header: t('common.campaign') }),
      col.accessor('status', { header: t('common.status'), cell: (c) => <StatusBadge status={c.getValue()} /> }),
      col.accessor('customerRef', { header: t('coupons.customer'), cell: (c) => c.getValue() ?? <span className="muted">—</span> }),
      col.accessor('validTo', { header: t('coupons.validTo'), cell: (c) => fmt.dateTimeShort(c.getValue()) }),
      col.accessor('createdAt', { header: t('coupons.issuedAt'), cell: (c) => fmt.dateTimeShort(c.getValue()) }),
    ],
    [t, fmt],
  );
  const rows = res.data?.coupons.edges.map((e) => e.node);
  const pageInfo = res.data?.coupons.pageInfo;
  return (
    <>
      <PageHeader title={t('coupons.title')} subtitle={t('common.timezone', { tz: fmt.timezone })} />
      <Card title={t('coupons.search')}>
        <CodeSearch />
      </Card>
      <Card>
        <div className="filters">
          {role !== 'CLERK' && (
            <label className="filter">
              <span>{t('common.campaign')}</span>
              <select value={campaignId} onChange={(e) => setFilter('campaign', e.target.value)} name="campaign">
                <option value="">{t('common.all')}</option>
                {campaigns.data?.campaigns.edges.map((e) => (
                  <option key={e.node.id} value={e.node.id}>
                    {e.node.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label className="filter">
            <span>{t('common.status')}</span>
            <select value={status} onChange={(e) => setFilter('status', e.target.value)} name="status">
              <option value="">{t('common.all')}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {t(`status.${s}`)}
                </option>
              ))}
            </select>
          </label>
          <SelectFilter label={t('coupons.redeemedAt')} name="store" value={storeId} onChange={(v) => setFilter('store', v)} all={t('common.allStores')}
            options={stores.map((s) => ({ value: s.id, label: s.name }))} />
        </div>
        <DataTable
          testId="coupons-table"
          columns={columns}
          data={rows}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('coupons.empty')}
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
