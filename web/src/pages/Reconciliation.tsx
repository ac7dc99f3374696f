import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Link, NavLink, Route, Routes, useSearchParams } from 'react-router';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useMutation, useQuery } from 'urql';
import { useAuth } from '../app/auth';
import { downloadExport } from '../app/download';
import { useI18n } from '../app/i18n';
import { useCursorPager } from '../app/pager';
import { useFormat, useViewer } from '../app/viewer';
import { StatusBadge } from '../components/Badge';
import { ConfirmButton } from '../components/Confirm';
import { DataTable } from '../components/DataTable';
import { Card, Field, PageHeader } from '../components/Page';
import { Alert, Empty, ErrorState, Loading, useErrorText } from '../components/States';
import { InputFilter, SelectFilter } from '../components/Filters';
import { graphql } from '../gql';
import type { FindingKind, FindingsQuery, FindingStatus, StatementQuery } from '../gql/graphql';
import { formatCouponCode } from '../lib/code';
import { errorTextIn } from '../lib/errors';
import { dayKey, localInputToUtc } from '../lib/dates';
import { formatFen } from '../lib/money';

const FindingsDocument = graphql(`
  query Findings($filter: FindingFilter, $first: Int, $after: String) {
    findings(filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        node {
          id
          kind
          status
          redeemNo
          details
          createdAt
          resolvedBy
          note
          resolvedAt
          reopened
          history {
            action
            at
            by
            note
          }
          coupon {
            id
            code
            status
            version
          }
          redemption {
            redeemNo
            status
            orderAmount
            discountAmount
            orderRef
            createdAt
            finishedAt
            store {
              id
              name
            }
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

const ResolveFindingDocument = graphql(`
  mutation ResolveFinding($input: ResolveFindingInput!) {
    resolveFinding(input: $input) {
      id
      status
      note
      resolvedBy
      resolvedAt
    }
  }
`);

const StatementDocument = graphql(`
  query Statement($from: String!, $to: String!, $storeId: ID) {
    statements(from: $from, to: $to, storeId: $storeId) {
      timezone
      from
      to
      closedDays
      stores {
        day
        store {
          id
          name
        }
        redeemedCount
        redeemedAmount
        refundedCount
        refundedAmount
        netCount
        netAmount
        stored
        closed
      }
      campaigns {
        day
        store {
          id
          name
        }
        campaign {
          id
          name
        }
        redeemedCount
        redeemedAmount
        refundedCount
        refundedAmount
        netCount
        netAmount
        stored
        closed
      }
      lapsed {
        day
        campaign {
          id
          name
        }
        expiredCount
        expiredValue
        voidedCount
        stored
        closed
      }
      adjustments {
        day
        closedDay
        store {
          id
          name
        }
        campaign {
          id
          name
        }
        figure
        count
        amount
      }
    }
  }
`);

const CloseStatementDayDocument = graphql(`
  mutation CloseStatementDay($input: CloseStatementDayInput!) {
    closeStatementDay(input: $input) {
      from
      to
      closedDays
    }
  }
`);

const KINDS: FindingKind[] = [
  'SUCCEEDED_FLOW_COUPON_NOT_REDEEMED',
  'REDEEMED_COUPON_FLOW_COUNT',
  'PROCESSING_FLOW_COUPON_NOT_HELD',
  'REDEEMING_COUPON_WITHOUT_FLOW',
  'STUCK_REDEEMING',
  'ORDER_WITHOUT_REDEMPTION',
  'REDEMPTION_WITHOUT_ORDER',
  'REFUND_WITHOUT_REDEMPTION',
  'REFUND_COUNT',
  'HISTORY_MISMATCH',
  'ILLEGAL_TRANSITION',
  'ISSUED_COUNT_MISMATCH',
  'ALLOWANCE_COUNT_MISMATCH',
  'LOOKUP_FAILING',
  'WEBHOOK_FAILING',
];
const PAGE = 25;

type FindingRow = FindingsQuery['findings']['edges'][number]['node'];
const fcol = createColumnHelper<FindingRow>();

function Tabs() {
  const { t } = useI18n();
  return (
    <div className="tabs" role="tablist">
      <NavLink to="/reconciliation" end className="tab" role="tab">
        {t('recon.findings')}
      </NavLink>
      <NavLink to="/reconciliation/statements" className="tab" role="tab">
        {t('recon.statements')}
      </NavLink>
    </div>
  );
}

function ExportButtons({ base, params, name }: { base: string; params: Record<string, string | undefined>; name: string }) {
  const { t, locale } = useI18n();
  const { token } = useAuth();
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  async function run(ext: 'csv' | 'xlsx') {
    setBusy(true);
    setNote(null);
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...params, lang: locale === 'zh-CN' ? 'zh' : undefined })) if (v) q.set(k, v);
    const file = `${name}.${ext}`;
    try {
      await downloadExport(token!, `${base}.${ext}?${q}`, file);
      setNote({ kind: 'success', text: t('common.exported', { file }) });
    } catch (e) {
      setNote({ kind: 'error', text: t('common.exportFailed', { msg: (e as Error).message }) });
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="export-buttons">
      <button type="button" className="btn" disabled={busy} onClick={() => run('csv')} data-testid="export-csv">
        ↓ {t('common.exportCsv')}
      </button>
      <button type="button" className="btn" disabled={busy} onClick={() => run('xlsx')} data-testid="export-xlsx">
        ↓ {t('recon.exportXlsx')}
      </button>
      {note && <Alert kind={note.kind}>{note.text}</Alert>}
    </div>
  );
}

function FindingPanel({ f, onClose, onResolved }: { f: FindingRow; onClose: () => void; onResolved: () => void }) {
  const { t, tk } = useI18n();
  const fmt = useFormat();
  const errorText = useErrorText();
  const [note, setNote] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [{ fetching }, resolve] = useMutation(ResolveFindingDocument);
  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const n = note.trim();
    if (!n || n.length > 1000) {
      setProblem(t('recon.noteRequired'));
      return;
    }
    setProblem(null);
    const res = await resolve({ input: { findingId: f.id, note: n } }, { additionalTypenames: ['Finding'] });
    if (res.data) {
      setDone(true);
      onResolved();
    } else setProblem(errorText(res.error));
  }
  const r = f.redemption;
  return (
    <Card
      className="finding-panel"
      title={
        <span className="title-with-badge">
          {t('recon.finding', { id: f.id })} <StatusBadge status={done ? 'RESOLVED' : f.status} />
        </span>
      }
      actions={
        <button type="button" className="btn btn-ghost btn-small" onClick={onClose}>
          {t('common.close')}
        </button>
      }
    >
      <div className="finding-kind">
        {tk(`kind.${f.kind}`)}
        {f.reopened > 0 && (
          <span className="badge badge-danger finding-reopened" data-testid="finding-reopened">
            {t('recon.reopenedTimes', { n: f.reopened })}
          </span>
        )}
      </div>
      <div className="finding-details">
        <div className="fact-label">{t('recon.details')}</div>
        <pre>{f.details}</pre>
      </div>
      {f.history.length > 0 && (
        <>
          <div className="fact-label">{t('recon.history')}</div>
          <ol className="history" data-testid="finding-history">
            {f.history.map((h, i) => (
              <li key={i} className={`history-${h.action}`}>
                <strong>{tk(`findingAction.${h.action}`)}</strong> · <span className="nowrap">{fmt.dateTime(h.at)}</span>
                {h.by && <span className="muted"> · {t('recon.by', { who: h.by })}</span>}
                {h.note && <div className="history-note">{h.note}</div>}
              </li>
            ))}
          </ol>
        </>
      )}
      <div className="fact-label">{t('recon.evidence')}</div>
      {!f.coupon && !r && <p className="muted">{t('recon.noEvidence')}</p>}
      <div className="evidence">
        {f.coupon && (
          <div className="evidence-item">
            <div className="fact-label">{t('recon.couponState')}</div>
            <Link to={`/coupons/${f.coupon.code}`} className="mono link">
              {formatCouponCode(f.coupon.code)}
            </Link>{' '}
            <StatusBadge status={f.coupon.status} /> <span className="muted">v{f.coupon.version}</span>
          </div>
        )}
        {(r || f.redeemNo) && (
          <div className="evidence-item">
            <div className="fact-label">{t('recon.flowState')}</div>
            <code>{r?.redeemNo ?? f.redeemNo}</code> {r && <StatusBadge status={r.status} />}
            {r && (
              <div className="muted small">
                {r.store.name} · {fmt.money(r.orderAmount)} / −{fmt.money(r.discountAmount)} · {fmt.dateTime(r.createdAt)}
              </div>
            )}
          </div>
        )}
        {r && (
          <div className="evidence-item">
            <div className="fact-label">{t('recon.order')}</div>
            {r.orderRef ? <code>{r.orderRef}</code> : <span className="muted">{t('recon.noOrder')}</span>}
          </div>
        )}
      </div>
      {f.status === 'RESOLVED' || done ? (
        <Alert kind="success" title={done ? t('recon.resolved', { id: f.id }) : t('recon.resolvedBy', { who: f.resolvedBy ?? '—', at: fmt.dateTime(f.resolvedAt) })}>
          {done ? note.trim() : f.note}
        </Alert>
      ) : (
        <form onSubmit={submit} data-testid="resolve-form" className="resolve-form">
          <Field label={t('recon.note')} error={problem ?? undefined}>
            <textarea rows={3} maxLength={1000} value={note} placeholder={t('recon.notePlaceholder')} onChange={(e) => setNote(e.target.value)} />
          </Field>
          <button type="submit" className="btn btn-primary" disabled={fetching}>
            {fetching ? t('recon.resolving') : t('recon.resolve')}
          </button>
        </form>
      )}
    </Card>
  );
}

function Findings() {
  const { t, tk } = useI18n();
  const fmt = useFormat();
  const [params, setParams] = useSearchParams();
  const status = (params.get('status') ?? 'OPEN') as FindingStatus | 'ALL';
  const kind = (params.get('kind') ?? '') as FindingKind | '';
  const fromInput = params.get('from') ?? '';
  const toInput = params.get('to') ?? '';
  const selected = params.get('finding');
  const from = fromInput ? localInputToUtc(fromInput, fmt.timezone)?.toISOString() : undefined;
  const to = toInput ? localInputToUtc(toInput, fmt.timezone)?.toISOString() : undefined;
  const filter = { status: status === 'ALL' ? undefined : status, kind: kind || undefined, from, to };
  const pager = useCursorPager(JSON.stringify(filter));
  const [res, reexecute] = useQuery({ query: FindingsDocument, variables: { filter, first: PAGE, after: pager.after } });
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  const rows = res.data?.findings.edges.map((e) => e.node);
  const pageInfo = res.data?.findings.pageInfo;
  // The finding under review stays on screen after it is resolved, although
  // it then leaves the list of open findings.
  const [pinned, setPinned] = useState<FindingRow | null>(null);
  const listed = rows?.find((r) => r.id === selected);
  const current = listed ?? (pinned && pinned.id === selected ? pinned : undefined);
  const columns = useMemo(
    () => [
      fcol.accessor('id', { header: '#', cell: (c) => <span className="muted">#{c.getValue()}</span> }),
      fcol.accessor('kind', {
        header: t('recon.kind'),
        cell: (c) => (
          <div>
            <div className="strong">{tk(`kind.${c.getValue()}`)}</div>
            <div className="cell-note clamp">{c.row.original.details}</div>
          </div>
        ),
      }),
      fcol.accessor((r) => r.coupon?.code, {
        id: 'coupon',
        header: t('ledger.coupon'),
        cell: (c) => (c.getValue() ? <span className="mono">{formatCouponCode(c.getValue()!)}</span> : <span className="muted">—</span>),
      }),
      fcol.accessor('redeemNo', { header: t('flow.redeemNo'), cell: (c) => (c.getValue() ? <code>{c.getValue()}</code> : <span className="muted">—</span>) }),
      fcol.accessor('status', {
        header: t('common.status'),
        cell: (c) => (
          <div>
            <StatusBadge status={c.getValue()} />
            {c.row.original.reopened > 0 && <div className="cell-note nowrap">{t('recon.reopened')} ×{c.row.original.reopened}</div>}
          </div>
        ),
      }),
      fcol.accessor('createdAt', { header: t('recon.found'), cell: (c) => <span className="nowrap">{fmt.dateTime(c.getValue())}</span> }),
      fcol.display({
        id: 'review',
        header: '',
        cell: (c) => (
          <button
            type="button"
            className="btn btn-small"
            data-testid="review"
            onClick={() => {
              setPinned(c.row.original);
              set('finding', c.row.original.id);
            }}
          >
            {t('recon.review')}
          </button>
        ),
      }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, tk, fmt, params],
  );
  return (
    <>
      <div className="toolbar">
        <Tabs />
        <ExportButtons base="/export/findings" name={`findings-${dayKey(new Date(), fmt.timezone)}`} params={{ status: filter.status, from, to }} />
      </div>
      {current && <FindingPanel key={current.id} f={current} onClose={() => set('finding', '')} onResolved={() => reexecute({ requestPolicy: 'network-only' })} />}
      <Card>
        <div className="filters">
          <label className="filter">
            <span>{t('common.status')}</span>
            <select name="status" value={status} onChange={(e) => set('status', e.target.value === 'OPEN' ? '' : e.target.value)}>
              <option value="OPEN">{t('status.OPEN')}</option>
              <option value="RESOLVED">{t('status.RESOLVED')}</option>
              <option value="ALL">{t('common.all')}</option>
            </select>
          </label>
          <label className="filter">
            <span>{t('recon.kind')}</span>
            <select name="kind" value={kind} onChange={(e) => set('kind', e.target.value)}>
              <option value="">{t('common.all')}</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {t(`kind.${k}`)}
                </option>
              ))}
            </select>
          </label>
          <InputFilter label={t('common.from')} type="datetime-local" name="from" value={fromInput} onChange={(v) => set('from', v)} />
          <InputFilter label={t('common.to')} type="datetime-local" name="to" value={toInput} onChange={(v) => set('to', v)} />
        </div>
        <DataTable
          testId="findings-table"
          columns={columns}
          data={rows}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('recon.empty')}
          rowKey={(r) => r.id}
          pager={{ page: pager.page, hasPrev: pager.hasPrev, hasNext: !!pageInfo?.hasNextPage, onPrev: pager.prev, onNext: () => pager.next(pageInfo?.endCursor) }}
        />
      </Card>
    </>
  );
}

type Line = StatementQuery['statements']['stores'][number];

function sum(lines: Line[]) {
  return lines.reduce(
    (a, l) => ({
      redeemedCount: a.redeemedCount + l.redeemedCount,
      redeemedAmount: a.redeemedAmount + l.redeemedAmount,
      refundedCount: a.refundedCount + l.refundedCount,
      refundedAmount: a.refundedAmount + l.refundedAmount,
      netCount: a.netCount + l.netCount,
      netAmount: a.netAmount + l.netAmount,
    }),
    { redeemedCount: 0, redeemedAmount: 0, refundedCount: 0, refundedAmount: 0, netCount: 0, netAmount: 0 },
  );
}

const PALETTE = ['#2563eb', '#0f8a5f', '#b45309', '#6d4fc2', '#c2362f', '#0e7490', '#a21caf'];

/** daysBetween lists the YYYY-MM-DD days from..to, newest first. */
function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  const utc = (day: string) => {
    const [y, m, d] = day.split('-').map(Number);
    return Date.UTC(y, m - 1, d);
  };
  for (let t = utc(from); t <= utc(to) && out.length <= 366; t += 86400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out.reverse();
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

/** LockIcon is a padlock drawn in SVG (no emoji font is needed to show it). */
function LockIcon({ title }: { title?: string }) {
  return (
    <svg className="lock-icon" width="11" height="12" viewBox="0 0 11 12" role={title ? 'img' : undefined} aria-hidden={title ? undefined : true} aria-label={title}>
      {title && <title>{title}</title>}
      <path d="M3 5V3.5a2.5 2.5 0 0 1 5 0V5" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <rect x="1" y="5" width="9" height="6.5" rx="1.3" fill="currentColor" />
    </svg>
  );
}

function LockBadge() {
  const { t } = useI18n();
  return (
    <span className="badge badge-info" data-testid="day-closed">
      <LockIcon /> {t('recon.dayClosed')}
    </span>
  );
}

const DAYS_SHOWN = 14;

/** Days lists each day of the range with whether it is closed, and closes a day that is over. */
function Days({ st, stores, onClosed }: { st: StatementQuery['statements']; stores: Line[]; onClosed: () => void }) {
  const { t, locale } = useI18n();
  const fmt = useFormat();
  const [all, setAll] = useState(false);
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [{ fetching }, close] = useMutation(CloseStatementDayDocument);
  const today = dayKey(new Date(), fmt.timezone);
  const closed = new Set(st.closedDays);
  const days = daysBetween(st.from, st.to);
  const shown = all ? days : days.slice(0, DAYS_SHOWN);
  const perDay = new Map<string, { count: number; net: number; stored: boolean }>();
  for (const l of stores) {
    const d = perDay.get(l.day) ?? { count: 0, net: 0, stored: true };
    d.count += l.redeemedCount;
    d.net += l.netAmount;
    d.stored &&= l.stored;
    perDay.set(l.day, d);
  }
  async function closeDay(day: string) {
    setNote(null);
    const res = await close({ input: { date: day } }, { additionalTypenames: ['Statement'] });
    if (res.data) {
      setNote({ kind: 'success', text: t('recon.closedDone', { day }) });
      onClosed();
    } else setNote({ kind: 'error', text: t('recon.closeFailed', { day, msg: errorTextIn(locale, 'recon.close.error', res.error) }) });
  }
  return (
    <>
      <h3 className="section-title">
        {t('recon.days')} <span className="muted">· {t('recon.daysClosed', { n: days.filter((d) => closed.has(d)).length, total: days.length })}</span>
      </h3>
      <p className="muted small">{t('recon.daysHint')}</p>
      {note && (
        <div data-testid="close-day-outcome">
          <Alert kind={note.kind}>{note.text}</Alert>
        </div>
      )}
      <div className="table-scroll">
        <table className="table" data-testid="statement-days">
          <thead>
            <tr>
              <th>{t('recon.day')}</th>
              <th>{t('recon.dayState')}</th>
              <th className="num">{t('recon.redeemed')}</th>
              <th className="num">{t('recon.netAmount')}</th>
              <th>{t('recon.source')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {shown.map((day) => {
              const d = perDay.get(day);
              const isClosed = closed.has(day);
              const over = day < today;
              return (
                <tr key={day} data-day={day}>
                  <td className="nowrap">{day}</td>
                  <td>
                    {isClosed ? (
                      <LockBadge />
                    ) : over ? (
                      <span className="badge badge-neutral">{t('recon.dayOpen')}</span>
                    ) : (
                      <span className="badge badge-muted">{t('recon.dayNotOver')}</span>
                    )}
                  </td>
                  <td className="num">{d?.count ?? 0}</td>
                  <td className="num">{fmt.money(d?.net ?? 0)}</td>
                  <td className="muted small">{isClosed || d?.stored ? t('recon.stored') : d ? t('recon.live') : '—'}</td>
                  <td>
                    {over && !isClosed && (
                      <ConfirmButton
                        small
                        testId="close-day"
                        label={fetching ? t('recon.closing') : t('recon.closeDay')}
                        question={t('recon.closeDayConfirm', { day })}
                        confirmLabel={t('recon.closeDayYes')}
                        disabled={fetching}
                        onConfirm={() => closeDay(day)}
                      />
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {!all && days.length > DAYS_SHOWN && (
        <button type="button" className="btn btn-ghost btn-small" onClick={() => setAll(true)}>
          {t('recon.showAllDays', { n: days.length })}
        </button>
      )}
    </>
  );
}

function Statements() {
  const { t, tk } = useI18n();
  const { stores } = useViewer();
  const fmt = useFormat();
  const [params, setParams] = useSearchParams();
  const today = new Date();
  const from = params.get('from') ?? dayKey(new Date(today.getTime() - 6 * 86400_000), fmt.timezone);
  const to = params.get('to') ?? dayKey(today, fmt.timezone);
  const storeId = params.get('store') ?? '';
  const validRange = /^\d{4}-\d{2}-\d{2}$/.test(from) && /^\d{4}-\d{2}-\d{2}$/.test(to) && from <= to && (Date.parse(to) - Date.parse(from)) / 86400_000 <= 365;
  const [res, reexecute] = useQuery({ query: StatementDocument, variables: { from, to, storeId: storeId || undefined }, pause: !validRange });
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  const st = res.data?.statements;
  const chart = useMemo(() => {
    if (!st) return { data: [], names: [] as { id: string; name: string }[] };
    const days = new Map<string, Record<string, number | string>>();
    const names = new Map<string, string>();
    for (const l of st.stores) {
      names.set(l.store.id, l.store.name);
      const d = days.get(l.day) ?? { day: l.day.slice(5) };
      d[l.store.id] = Number(d[l.store.id] ?? 0) + l.netAmount / 100;
      days.set(l.day, d);
    }
    return { data: [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => v), names: [...names].map(([id, name]) => ({ id, name })) };
  }, [st]);
  const lines = st ? [...st.stores].sort((a, b) => b.day.localeCompare(a.day) || a.store.name.localeCompare(b.store.name)) : [];
  const total = sum(lines);
  const lapsed = st ? [...st.lapsed].sort((a, b) => b.day.localeCompare(a.day) || a.campaign.name.localeCompare(b.campaign.name)) : [];
  const lapsedTotal = lapsed.reduce((a, l) => ({ expired: a.expired + l.expiredCount, value: a.value + l.expiredValue, voided: a.voided + l.voidedCount }), { expired: 0, value: 0, voided: 0 });
  const adjustments = st ? [...st.adjustments].sort((a, b) => b.day.localeCompare(a.day) || b.closedDay.localeCompare(a.closedDay)) : [];
  const lock = (closed: boolean) => (closed ? <span className="day-lock"><LockIcon title={t('recon.dayClosed')} /></span> : null);
  return (
    <>
      <div className="toolbar">
        <Tabs />
        <ExportButtons base="/export/statements" name={`statements-${from}-${to}`} params={{ from, to, storeId: storeId || undefined }} />
      </div>
      <Card>
        <div className="filters">
          <InputFilter label={t('recon.fromDay')} type="date" name="from" value={from} onChange={(v) => set('from', v)} />
          <InputFilter label={t('recon.toDay')} type="date" name="to" value={to} onChange={(v) => set('to', v)} />
          <SelectFilter label={t('common.store')} name="store" value={storeId} onChange={(v) => set('store', v)} all={t('common.allStores')}
            options={stores.map((s) => ({ value: s.id, label: s.name }))} />
        </div>
        {!validRange && <Alert kind="warning">{t('recon.badRange')}</Alert>}
        {validRange && res.error && !st && <ErrorState error={res.error} onRetry={() => reexecute({ requestPolicy: 'network-only' })} />}
        {validRange && !st && !res.error && <Loading />}
        {st && <Days st={st} stores={st.stores} onClosed={() => reexecute({ requestPolicy: 'network-only' })} />}
        {st && lines.length === 0 && <Empty>{t('recon.statementEmpty')}</Empty>}
        {st && lines.length > 0 && (
          <>
            <h3 className="section-title">{t('recon.byDay')}</h3>
            <div className="chart" data-testid="statement-chart">
              <ResponsiveContainer width="100%" height={240}>
                <BarChart data={chart.data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                  <CartesianGrid vertical={false} stroke="#e6e9ef" />
                  <XAxis dataKey="day" tick={{ fontSize: 12, fill: '#667085' }} axisLine={false} tickLine={false} />
                  <YAxis tick={{ fontSize: 12, fill: '#667085' }} axisLine={false} tickLine={false} tickFormatter={(v: number) => `¥${v}`} />
                  <Tooltip formatter={(v) => formatFen(Math.round(Number(v) * 100))} />
                  <Legend wrapperStyle={{ fontSize: 12 }} />
                  {chart.names.map((n, i) => (
                    <Bar key={n.id} dataKey={n.id} name={n.name} stackId="net" fill={PALETTE[i % PALETTE.length]} maxBarSize={56} isAnimationActive={false} />
                  ))}
                </BarChart>
              </ResponsiveContainer>
            </div>
            <div className="table-scroll">
              <table className="table" data-testid="statement-table">
                <thead>
                  <tr>
                    <th>{t('recon.day')}</th>
                    <th>{t('common.store')}</th>
                    <th className="num">{t('recon.redeemed')}</th>
                    <th className="num">{t('recon.redeemedAmount')}</th>
                    <th className="num">{t('recon.refunded')}</th>
                    <th className="num">{t('recon.refundedAmount')}</th>
                    <th className="num">{t('recon.netCount')}</th>
                    <th className="num">{t('recon.netAmount')}</th>
                  </tr>
                </thead>
                <tbody>
                  {lines.map((l) => (
                    <tr key={`${l.day}-${l.store.id}`}>
                      <td className="nowrap">
                        {l.day}
                        {lock(l.closed)}
                      </td>
                      <td>{l.store.name}</td>
                      <td className="num">{l.redeemedCount}</td>
                      <td className="num">{fmt.money(l.redeemedAmount)}</td>
                      <td className="num">{l.refundedCount}</td>
                      <td className="num">{fmt.money(l.refundedAmount)}</td>
                      <td className="num">{l.netCount}</td>
                      <td className="num strong">{fmt.money(l.netAmount)}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <td colSpan={2}>{t('overview.total')}</td>
                    <td className="num">{total.redeemedCount}</td>
                    <td className="num">{fmt.money(total.redeemedAmount)}</td>
                    <td className="num">{total.refundedCount}</td>
                    <td className="num">{fmt.money(total.refundedAmount)}</td>
                    <td className="num">{total.netCount}</td>
                    <td className="num">{fmt.money(total.netAmount)}</td>
                  </tr>
                </tfoot>
              </table>
            </div>
            {st.campaigns.length > 0 && (
              <>
                <h3 className="section-title">{t('recon.perCampaign')}</h3>
                <div className="table-scroll">
                  <table className="table" data-testid="statement-campaigns">
                    <thead>
                      <tr>
                        <th>{t('recon.day')}</th>
                        <th>{t('common.store')}</th>
                        <th>{t('common.campaign')}</th>
                        <th className="num">{t('recon.redeemed')}</th>
                        <th className="num">{t('recon.redeemedAmount')}</th>
                        <th className="num">{t('recon.refunded')}</th>
                        <th className="num">{t('recon.refundedAmount')}</th>
                        <th className="num">{t('recon.netAmount')}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {[...st.campaigns]
                        .sort((a, b) => b.day.localeCompare(a.day) || a.store.name.localeCompare(b.store.name))
                        .map((l) => (
                          <tr key={`${l.day}-${l.store.id}-${l.campaign?.id}`}>
                            <td className="nowrap">
                              {l.day}
                              {lock(l.closed)}
                            </td>
                            <td>{l.store.name}</td>
                            <td>{l.campaign?.name ?? '—'}</td>
                            <td className="num">{l.redeemedCount}</td>
                            <td className="num">{fmt.money(l.redeemedAmount)}</td>
                            <td className="num">{l.refundedCount}</td>
                            <td className="num">{fmt.money(l.refundedAmount)}</td>
                            <td className="num strong">{fmt.money(l.netAmount)}</td>
                          </tr>
                        ))}
                    </tbody>
                  </table>
                </div>
              </>
            )}
          </>
        )}
        {st && (
          <>
            <h3 className="section-title">{t('recon.lapsed')}</h3>
            {storeId ? (
              <p className="muted small">{t('recon.lapsedOneStore')}</p>
            ) : lapsed.length === 0 ? (
              <Empty>{t('recon.lapsedEmpty')}</Empty>
            ) : (
              <>
                <p className="muted small">{t('recon.lapsedHint')}</p>
                <div className="table-scroll">
                  <table className="table" data-testid="statement-lapsed">
                    <thead>
                      <tr>
                        <th>{t('recon.day')}</th>
                        <th>{t('common.campaign')}</th>
                        <th className="num">{t('recon.expired')}</th>
                        <th className="num">{t('recon.expiredValue')}</th>
                        <th className="num">{t('recon.voided')}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {lapsed.map((l) => (
                        <tr key={`${l.day}-${l.campaign.id}`}>
                          <td className="nowrap">
                            {l.day}
                            {lock(l.closed)}
                          </td>
                          <td>{l.campaign.name}</td>
                          <td className="num">{l.expiredCount}</td>
                          <td className="num">{fmt.money(l.expiredValue)}</td>
                          <td className="num">{l.voidedCount}</td>
                        </tr>
                      ))}
                    </tbody>
                    <tfoot>
                      <tr>
                        <td colSpan={2}>{t('overview.total')}</td>
                        <td className="num">{lapsedTotal.expired}</td>
                        <td className="num">{fmt.money(lapsedTotal.value)}</td>
                        <td className="num">{lapsedTotal.voided}</td>
                      </tr>
                    </tfoot>
                  </table>
                </div>
              </>
            )}
            <h3 className="section-title">{t('recon.adjustments')}</h3>
            <p className="muted small">{t('recon.adjustmentsHint')}</p>
            {adjustments.length === 0 ? (
              <Empty>{t('recon.adjustmentsEmpty')}</Empty>
            ) : (
              <div className="table-scroll">
                <table className="table" data-testid="statement-adjustments">
                  <thead>
                    <tr>
                      <th>{t('recon.bookedOn')}</th>
                      <th>{t('recon.closedDayAdjusted')}</th>
                      <th>{t('common.store')}</th>
                      <th>{t('common.campaign')}</th>
                      <th>{t('recon.figure')}</th>
                      <th className="num">{t('recon.count')}</th>
                      <th className="num">{t('recon.amount')}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {adjustments.map((a, i) => (
                      <tr key={i}>
                        <td className="nowrap">{a.day}</td>
                        <td className="nowrap">
                          {a.closedDay}
                          {lock(true)}
                        </td>
                        <td>{a.store?.name ?? <span className="muted">{t('recon.noStore')}</span>}</td>
                        <td>{a.campaign.name}</td>
                        <td>{tk(`figure.${a.figure}`)}</td>
                        <td className="num">{signed(a.count)}</td>
                        <td className="num">{a.amount > 0 ? `+${fmt.money(a.amount)}` : fmt.money(a.amount)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </Card>
    </>
  );
}

/** ReconciliationPage: findings to review and resolve, and daily statements per store. */
export function ReconciliationPage() {
  const { t } = useI18n();
  const fmt = useFormat();
  return (
    <>
      <PageHeader title={t('recon.title')} subtitle={t('common.timezone', { tz: fmt.timezone })} />
      <Routes>
        <Route index element={<Findings />} />
        <Route path="statements" element={<Statements />} />
      </Routes>
    </>
  );
}
