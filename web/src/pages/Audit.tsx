import { createColumnHelper } from '@tanstack/react-table';
import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { useI18n } from '../app/i18n';
import { useCursorPager } from '../app/pager';
import { useFormat } from '../app/viewer';
import { DataTable } from '../components/DataTable';
import { InputFilter } from '../components/Filters';
import { Card, PageHeader } from '../components/Page';
import { graphql } from '../gql';
import type { AuditEventsQuery } from '../gql/graphql';

export const AuditEventsDocument = graphql(`
  query AuditEvents($filter: AuditEventFilter, $first: Int, $after: String) {
    auditEvents(filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        node {
          id
          action
          actor
          actorId
          target
          detail
          requestId
          createdAt
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

type Row = AuditEventsQuery['auditEvents']['edges'][number]['node'];
const col = createColumnHelper<Row>();
const PAGE = 30;
/** Actions coupond records, offered as suggestions; the filter takes any action. */
const KNOWN_ACTIONS = [
  'campaign.create',
  'campaign.update',
  'campaign.pause',
  'campaign.resume',
  'campaign.end',
  'campaign.issue',
  'coupon.void',
  'coupon.expire',
  'redemption.refund',
  'finding.resolve',
  'job.run',
  'store.create',
  'token.create',
  'token.revoke',
  'request.refused',
  'request.rate_limited',
];

/**
 * AuditPage is the merchant's audit log, newest first, with filters by action,
 * actor (token id) and days in the merchant's zone, and cursor pages.
 */
export function AuditPage() {
  const { t } = useI18n();
  const fmt = useFormat();
  const [params, setParams] = useSearchParams();
  const action = params.get('action') ?? '';
  const actorId = params.get('actor') ?? '';
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  // Days go to the server as YYYY-MM-DD: it reads them in the merchant's zone.
  const filter = { action: action.trim() || undefined, actorId: actorId.trim() || undefined, from: from || undefined, to: to || undefined };
  const pager = useCursorPager(JSON.stringify(filter));
  const [res, reexecute] = useQuery({ query: AuditEventsDocument, variables: { filter, first: PAGE, after: pager.after } });
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  const columns = useMemo(
    () => [
      col.accessor('createdAt', { header: t('common.time'), cell: (c) => <span className="nowrap">{fmt.dateTime(c.getValue())}</span> }),
      col.accessor('action', { header: t('audit.action'), cell: (c) => <code className="nowrap">{c.getValue()}</code> }),
      col.accessor('actor', {
        header: t('audit.actor'),
        cell: (c) => {
          const r = c.row.original;
          if (!r.actorId) return <span className="muted">{r.actor === 'system' ? t('audit.system') : r.actor}</span>;
          return (
            <button type="button" className="link-button mono" title={t('audit.onlyActor')} data-testid="filter-actor" onClick={() => set('actor', r.actorId!)}>
              {r.actor}
            </button>
          );
        },
      }),
      col.accessor('target', { header: t('audit.target'), cell: (c) => <code className="nowrap">{c.getValue()}</code> }),
      col.accessor('detail', { header: t('audit.detail'), cell: (c) => <span className="audit-detail">{c.getValue() || '—'}</span> }),
      col.accessor('requestId', {
        header: t('audit.requestId'),
        cell: (c) => (c.getValue() ? <code className="small nowrap">{c.getValue()}</code> : <span className="muted">—</span>),
      }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, fmt, params],
  );
  const rows = res.data?.auditEvents.edges.map((e) => e.node);
  const pageInfo = res.data?.auditEvents.pageInfo;
  return (
    <>
      <PageHeader title={t('audit.title')} subtitle={`${t('audit.subtitle')} ${t('common.timezone', { tz: fmt.timezone })}`} />
      <Card>
        <div className="filters" data-testid="audit-filters">
          <label className="filter">
            <span>{t('audit.action')}</span>
            <input name="action" list="audit-actions" value={action} placeholder={t('audit.actionPlaceholder')} onChange={(e) => set('action', e.target.value)} />
            <datalist id="audit-actions">
              {KNOWN_ACTIONS.map((a) => (
                <option key={a} value={a} />
              ))}
            </datalist>
          </label>
          <InputFilter label={t('audit.actorId')} type="text" name="actor" value={actorId} onChange={(v) => set('actor', v)} />
          <InputFilter label={t('audit.fromDay')} type="date" name="from" value={from} onChange={(v) => set('from', v)} />
          <InputFilter label={t('audit.toDay')} type="date" name="to" value={to} onChange={(v) => set('to', v)} />
          {(action || actorId || from || to) && (
            <button type="button" className="btn btn-ghost" onClick={() => setParams(new URLSearchParams(), { replace: true })}>
              {t('common.reset')}
            </button>
          )}
        </div>
        <DataTable
          testId="audit-table"
          columns={columns}
          data={rows}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('audit.empty')}
          rowKey={(r) => r.id}
          pager={{ page: pager.page, hasPrev: pager.hasPrev, hasNext: !!pageInfo?.hasNextPage, onPrev: pager.prev, onNext: () => pager.next(pageInfo?.endCursor) }}
        />
      </Card>
    </>
  );
}
