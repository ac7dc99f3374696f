import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { useAuth } from '../app/auth';
import { downloadExport } from '../app/download';
import { useI18n } from '../app/i18n';
import { useCursorPager } from '../app/pager';
import { useFormat, useViewer } from '../app/viewer';
import { StatusBadge } from '../components/Badge';
import { DataTable } from '../components/DataTable';
import { OperatorName } from '../components/Operator';
import { Card, PageHeader } from '../components/Page';
import { InputFilter, SelectFilter } from '../components/Filters';
import { Alert } from '../components/States';
import { graphql } from '../gql';
import type { RedemptionsQuery, RedemptionStatus } from '../gql/graphql';
import { formatCouponCode } from '../lib/code';
import { localInputToUtc } from '../lib/dates';

const RedemptionsDocument = graphql(`
  query Redemptions($filter: RedemptionFilter, $first: Int, $after: String) {
    redemptions(filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        node {
          redeemNo
          requestId
          operation
          status
          rejectReason
          releaseReason
          orderAmount
          discountAmount
          orderRef
          createdAt
          finishedAt
          operator {
            id
            name
            role
          }
          store {
            id
            name
          }
          coupon {
            id
            code
            campaign {
              id
              name
            }
          }
          refund {
            refundNo
            amount
            createdAt
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

const STATUSES: RedemptionStatus[] = ['PROCESSING', 'SUCCEEDED', 'REJECTED', 'RELEASED'];
const PAGE = 30;
type Row = RedemptionsQuery['redemptions']['edges'][number]['node'];
const col = createColumnHelper<Row>();

/** exportQuery is the ledger filter as query parameters of /export/redemptions.csv. */
function exportQuery(f: Record<string, string | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) p.set(k, v);
  return p.toString();
}

export function RedemptionsPage() {
  const { t, tk, locale } = useI18n();
  const { stores } = useViewer();
  const { token } = useAuth();
  const fmt = useFormat();
  const [params, setParams] = useSearchParams();
  const storeId = params.get('store') ?? '';
  const status = (params.get('status') ?? '') as RedemptionStatus | '';
  const fromInput = params.get('from') ?? '';
  const toInput = params.get('to') ?? '';
  const from = fromInput ? localInputToUtc(fromInput, fmt.timezone)?.toISOString() : undefined;
  const to = toInput ? localInputToUtc(toInput, fmt.timezone)?.toISOString() : undefined;
  const filter = { storeId: storeId || undefined, status: status || undefined, from, to };
  const pager = useCursorPager(JSON.stringify(filter));
  const [res, reexecute] = useQuery({ query: RedemptionsDocument, variables: { filter, first: PAGE, after: pager.after } });
  const [exportNote, setExportNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [exporting, setExporting] = useState(false);

  const setFilter = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  const rows = res.data?.redemptions.edges.map((e) => e.node);
  const pageInfo = res.data?.redemptions.pageInfo;

  async function exportCsv() {
    setExporting(true);
    setExportNote(null);
    const file = `redemptions-${new Date().toISOString().slice(0, 10)}.csv`;
    try {
      await downloadExport(token!, `/export/redemptions.csv?${exportQuery({ ...filter, lang: locale === 'zh-CN' ? 'zh' : '' })}`, file);
      setExportNote({ kind: 'success', text: t('common.exported', { file }) });
    } catch (e) {
      setExportNote({ kind: 'error', text: t('common.exportFailed', { msg: (e as Error).message }) });
    } finally {
      setExporting(false);
    }
  }

  const columns = useMemo(
    () => [
      col.accessor('createdAt', { header: t('common.time'), cell: (c) => <span className="nowrap">{fmt.dateTime(c.getValue())}</span> }),
      col.accessor('redeemNo', { header: t('flow.redeemNo'), cell: (c) => <code className="nowrap">{c.getValue()}</code> }),
      col.accessor((r) => r.coupon.code, {
        id: 'coupon',
        header: t('ledger.coupon'),
        cell: (c) => (
          <div>
            <Link className="mono link nowrap" to={`/coupons/${c.getValue()}`}>
              {formatCouponCode(c.getValue())}
            </Link>
            <div className="cell-note">{c.row.original.coupon.campaign.name}</div>
          </div>
        ),
      }),
      col.accessor((r) => r.store.name, { id: 'store', header: t('common.store'), meta: { className: 'col-store' } }),
      col.accessor('operator', { header: t('flow.operator'), cell: (c) => <OperatorName operator={c.getValue()} /> }),
      col.accessor('status', {
        header: t('common.status'),
        cell: (c) => {
          const r = c.row.original;
          return (
            <div>
              <StatusBadge status={r.refund ? 'REFUNDED' : r.status} />
              {r.rejectReason && <div className="cell-note">{tk(`reject.${r.rejectReason}`)}</div>}
              {r.releaseReason && <div className="cell-note">{tk(`release.${r.releaseReason}`)}</div>}
              {r.refund && (
                <div className="cell-note nowrap">
                  {r.refund.refundNo} · −{fmt.money(r.refund.amount)}
                </div>
              )}
            </div>
          );
        },
      }),
      col.accessor('orderAmount', { header: t('flow.orderAmount'), cell: (c) => fmt.money(c.getValue()), meta: { className: 'num' } }),
      col.accessor('discountAmount', {
        header: t('flow.discount'),
        cell: (c) => (c.row.original.status === 'SUCCEEDED' ? fmt.money(c.getValue()) : <span className="muted">{fmt.money(c.getValue())}</span>),
        meta: { className: 'num' },
      }),
    ],
    [t, tk, fmt],
  );

  return (
    <>
      <PageHeader
        title={t('ledger.title')}
        subtitle={`${t('ledger.subtitle')} ${t('common.timezone', { tz: fmt.timezone })}`}
        actions={
          <button type="button" className="btn" onClick={exportCsv} disabled={exporting || !rows} data-testid="export-csv">
            ↓ {exporting ? t('common.exporting') : t('common.exportCsv')}
          </button>
        }
      />
      {exportNote && <Alert kind={exportNote.kind}>{exportNote.text}</Alert>}
      <Card>
        <div className="filters">
          <SelectFilter label={t('common.store')} name="store" value={storeId} onChange={(v) => setFilter('store', v)} all={t('common.allStores')}
            options={stores.map((s) => ({ value: s.id, label: s.name }))} />
          <label className="filter">
            <span>{t('common.status')}</span>
            <select name="status" value={status} onChange={(e) => setFilter('status', e.target.value)}>
              <option value="">{t('common.all')}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {t(`status.${s}`)}
                </option>
              ))}
            </select>
          </label>
          <InputFilter label={t('common.from')} type="datetime-local" name="from" value={fromInput} onChange={(v) => setFilter('from', v)} />
          <InputFilter label={t('common.to')} type="datetime-local" name="to" value={toInput} onChange={(v) => setFilter('to', v)} />
          {(storeId || status || fromInput || toInput) && (
            <button type="button" className="btn btn-ghost" onClick={() => setParams(new URLSearchParams(), { replace: true })}>
              {t('common.reset')}
            </button>
          )}
        </div>
        <DataTable
          testId="ledger-table"
          columns={columns}
          data={rows}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('ledger.empty')}
          rowKey={(r) => r.redeemNo}
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
