import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery } from 'urql';
import { useIdempotentMutation } from '../app/idempotent';
import { useI18n } from '../app/i18n';
import { useFormat, useViewer } from '../app/viewer';
import { StatusBadge } from '../components/Badge';
import { ConfirmButton } from '../components/Confirm';
import { DataTable } from '../components/DataTable';
import { OperatorName, type OperatorLike } from '../components/Operator';
import { Card, Field, PageHeader } from '../components/Page';
import { RefundForm } from '../components/RefundForm';
import { Alert, Empty, ErrorState, Loading, useErrorText } from '../components/States';
import { useWorth } from '../components/Worth';
import { graphql } from '../gql';
import type { CouponDetailQuery } from '../gql/graphql';
import { formatCouponCode } from '../lib/code';
import { attemptKey } from '../lib/requestId';

export const CouponDetailDocument = graphql(`
  query CouponDetail($code: String!) {
    coupon(code: $code) {
      id
      code
      status
      version
      customerRef
      validFrom
      validTo
      usesTotal
      usesLeft
      usableNextAt
      createdAt
      campaign {
        id
        name
        type
        value
        maxDiscount
        minSpend
        refundWindowMinutes
        stores {
          id
          name
        }
      }
      transitions {
        fromStatus
        toStatus
        versionAfter
        flowNo
        actor
        store {
          id
          name
        }
        createdAt
      }
      redemptions {
        redeemNo
        requestId
        operation
        status
        useNo
        customerRef
        rejectReason
        releaseReason
        store {
          id
          name
        }
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
        refund {
          refundNo
        }
      }
      refunds {
        refundNo
        requestId
        status
        amount
        reason
        createdAt
        redemption {
          redeemNo
        }
        reissuedCoupon {
          code
        }
        operator {
          id
          name
          role
        }
      }
    }
  }
`);

const VoidCouponDocument = graphql(`
  mutation VoidCoupon($input: VoidCouponInput!) {
    voidCoupon(input: $input) {
      id
      code
      status
      version
    }
  }
`);

type C = CouponDetailQuery['coupon'];
type RedemptionRow = C['redemptions'][number];
type RefundRow = C['refunds'][number];
const rcol = createColumnHelper<RedemptionRow>();
const fcol = createColumnHelper<RefundRow>();

/** operatorsByFlow maps redemption and refund numbers to who made them (null: the system). */
function operatorsByFlow(coupon: C): Map<string, OperatorLike | null> {
  const m = new Map<string, OperatorLike | null>();
  for (const r of coupon.redemptions) m.set(r.redeemNo, r.operator ?? null);
  for (const r of coupon.refunds) m.set(r.refundNo, r.operator ?? null);
  return m;
}

/**
 * usesByFlow maps redemption and refund numbers to the use of the coupon they
 * concern (a refund: the use of the redemption it reverses) and whether that
 * redemption succeeded; uses numbered 0 (rejected) are left out.
 */
function usesByFlow(coupon: C): Map<string, { useNo: number; succeeded: boolean }> {
  const byRedeemNo = new Map<string, { useNo: number; succeeded: boolean }>();
  for (const r of coupon.redemptions) {
    if (r.useNo > 0) byRedeemNo.set(r.redeemNo, { useNo: r.useNo, succeeded: r.status === 'SUCCEEDED' });
  }
  const m = new Map(byRedeemNo);
  for (const r of coupon.refunds) {
    const use = byRedeemNo.get(r.redemption.redeemNo);
    if (use) m.set(r.refundNo, use);
  }
  return m;
}

/**
 * TimelineUse says which use of a multi-use card a transition belongs to and,
 * on the transition that confirmed it, how many uses were left after it.
 */
function TimelineUse({ use, total, from, to }: { use?: { useNo: number; succeeded: boolean }; total: number; from: string; to: string }) {
  const { t } = useI18n();
  if (!use || total <= 1) return null;
  const confirmed = use.succeeded && from === 'REDEEMING' && (to === 'UNUSED' || to === 'REDEEMED');
  return (
    <>
      <span className="timeline-use" data-testid="timeline-use">
        {t('coupon.useOf', { n: use.useNo, total })}
      </span>
      {confirmed && (
        <span className="timeline-use" data-testid="timeline-left">
          {t('coupon.usesLeftAfter', { left: total - use.useNo })}
        </span>
      )}
    </>
  );
}

function Timeline({ coupon }: { coupon: C }) {
  const { t } = useI18n();
  const fmt = useFormat();
  const operators = operatorsByFlow(coupon);
  const uses = usesByFlow(coupon);
  return (
    <ol className="timeline" data-testid="timeline">
      <li className="timeline-item">
        <span className="timeline-dot dot-neutral" />
        <div className="timeline-main">
          <div className="timeline-title">
            {t('coupon.issued')} → <StatusBadge status="UNUSED" />
          </div>
          <div className="timeline-meta">
            <span>{fmt.dateTime(coupon.createdAt)}</span>
            <span>v0</span>
          </div>
        </div>
      </li>
      {coupon.transitions.map((tr, i) => (
        <li key={i} className="timeline-item">
          <span className={`timeline-dot dot-${tr.toStatus.toLowerCase()}`} />
          <div className="timeline-main">
            <div className="timeline-title">
              <StatusBadge status={tr.fromStatus} /> → <StatusBadge status={tr.toStatus} />
            </div>
            <div className="timeline-meta">
              <span>{fmt.dateTime(tr.createdAt)}</span>
              <span>v{tr.versionAfter}</span>
              <TimelineUse use={uses.get(tr.flowNo)} total={coupon.usesTotal} from={tr.fromStatus} to={tr.toStatus} />
              {tr.store && <span>{tr.store.name}</span>}
              <span>
                {t('coupon.flow')} <code>{tr.flowNo}</code>
              </span>
              <span>
                {t('coupon.actor')}{' '}
                {operators.has(tr.flowNo) ? (
                  <OperatorName operator={operators.get(tr.flowNo)} />
                ) : tr.actor === 'system' ? (
                  <OperatorName operator={null} />
                ) : (
                  <code>{tr.actor}</code>
                )}
              </span>
            </div>
          </div>
        </li>
      ))}
      {coupon.transitions.length === 0 && <li className="timeline-empty muted">{t('coupon.timelineEmpty')}</li>}
    </ol>
  );
}

/** VoidPanel voids an unused coupon, with a reason and a confirmation, under a request id reused on retry. */
function VoidPanel({ code, onVoided }: { code: string; onVoided: () => void }) {
  const { t } = useI18n();
  const errorText = useErrorText();
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const { fetching, run, retry, clearRetry } = useIdempotentMutation(VoidCouponDocument);
  useEffect(clearRetry, [reason, clearRetry]);
  const r = reason.trim();
  const valid = r.length > 0 && r.length <= 500;

  async function doVoid() {
    setProblem(null);
    const res = await run(attemptKey(code, r), (requestId) => ({ input: { code, reason: r, requestId } }), { additionalTypenames: ['Coupon'] });
    if (res.data) onVoided();
    else setProblem(errorText(res.error) + (res.retry ? ` ${t('common.retryNote')}` : ''));
  }

  return (
    <Card title={t('coupon.voidTitle')} className="void-panel">
      <p className="muted small">{t('coupon.voidHint')}</p>
      <div className="form-row" data-testid="void-form">
        <Field label={t('coupon.voidReason')} error={reason && !valid ? t('coupon.voidReasonRequired') : undefined}>
          <input name="reason" type="text" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
        </Field>
        <div className="form-actions">
          <ConfirmButton
            danger
            testId="void-coupon"
            disabled={!valid || fetching}
            label={fetching ? t('coupon.voiding') : retry ? t('common.retrySame') : t('coupon.void')}
            question={t('coupon.voidConfirm', { code: formatCouponCode(code) })}
            confirmLabel={t('coupon.voidYes')}
            onConfirm={doVoid}
          />
        </div>
      </div>
      {problem && <Alert kind={retry ? 'warning' : 'error'}>{problem}</Alert>}
    </Card>
  );
}

export function CouponPage() {
  const { code = '' } = useParams();
  const { t, tk } = useI18n();
  const { role } = useViewer();
  const fmt = useFormat();
  const worth = useWorth();
  const [res, reexecute] = useQuery({ query: CouponDetailDocument, variables: { code } });
  const [refunded, setRefunded] = useState<{ refundNo: string; amount: number; reissued?: string } | null>(null);
  const [voided, setVoided] = useState(false);
  const canRefund = role === 'ADMIN' || role === 'CLERK';
  const usesTotal = res.data?.coupon?.usesTotal ?? 1;
  const rcols = useMemo(
    () => [
      rcol.accessor('redeemNo', {
        header: t('flow.redeemNo'),
        cell: (c) => (
          <div>
            <code>{c.getValue()}</code>
            <div className="cell-note mono nowrap" title={t('flow.requestId')}>
              {c.row.original.requestId}
            </div>
          </div>
        ),
      }),
      rcol.accessor('status', {
        header: t('common.status'),
        cell: (c) => (
          <div>
            <StatusBadge status={c.getValue()} />
            {c.row.original.rejectReason && <div className="cell-note">{tk(`reject.${c.row.original.rejectReason}`)}</div>}
            {c.row.original.releaseReason && <div className="cell-note">{tk(`release.${c.row.original.releaseReason}`)}</div>}
          </div>
        ),
      }),
      rcol.accessor('useNo', {
        header: t('coupon.use'),
        cell: (c) => (
          <div>
            {c.getValue() > 0 ? (
              <span className="nowrap" data-testid="redemption-use">
                {t('coupon.useNoOf', { n: c.getValue(), total: usesTotal })}
              </span>
            ) : (
              <span className="muted">—</span>
            )}
            {c.row.original.customerRef && (
              <div className="cell-note" title={t('coupon.customer')}>
                {c.row.original.customerRef}
              </div>
            )}
          </div>
        ),
      }),
      rcol.accessor((r) => r.store.name, { id: 'store', header: t('common.store'), meta: { className: 'col-store' } }),
      rcol.accessor('orderAmount', { header: t('flow.orderAmount'), cell: (c) => fmt.money(c.getValue()), meta: { className: 'num' } }),
      rcol.accessor('discountAmount', { header: t('flow.discount'), cell: (c) => fmt.money(c.getValue()), meta: { className: 'num' } }),
      rcol.accessor('createdAt', {
        header: `${t('flow.created')} · ${t('flow.operator')}`,
        cell: (c) => (
          <div>
            <span className="nowrap">{fmt.dateTime(c.getValue())}</span>
            <div className="cell-note">
              <OperatorName operator={c.row.original.operator} />
            </div>
          </div>
        ),
      }),
      rcol.display({
        id: 'refund',
        header: t('flow.refund'),
        cell: (c) => {
          const r = c.row.original;
          if (r.refund) return <span className="muted">{t('flow.refunded', { no: r.refund.refundNo })}</span>;
          if (r.status === 'SUCCEEDED' && canRefund) return (
              <RefundForm
                redeemNo={r.redeemNo}
                showResult={false}
                onDone={(done) => {
                  setRefunded({ refundNo: done.refundNo, amount: done.amount, reissued: done.reissuedCoupon?.code });
                  reexecute({ requestPolicy: 'network-only' });
                }}
              />
            );
          return <span className="muted">—</span>;
        },
      }),
    ],
    [t, tk, fmt, canRefund, reexecute, usesTotal],
  );
  const fcols = useMemo(
    () => [
      fcol.accessor('refundNo', { header: t('flow.refundNo'), cell: (c) => <code>{c.getValue()}</code> }),
      fcol.accessor((r) => r.redemption.redeemNo, { id: 'redeemNo', header: t('flow.redeemNo'), cell: (c) => <code>{c.getValue()}</code> }),
      fcol.accessor('amount', { header: t('flow.amount'), cell: (c) => fmt.money(c.getValue()), meta: { className: 'num' } }),
      fcol.accessor('reason', { header: t('flow.reason') }),
      fcol.accessor((r) => r.reissuedCoupon?.code, {
        id: 'reissued',
        header: t('flow.reissued'),
        cell: (c) => (c.getValue() ? <Link className="mono link" to={`/coupons/${c.getValue()}`}>{formatCouponCode(c.getValue()!)}</Link> : '—'),
      }),
      fcol.accessor('createdAt', {
        header: `${t('flow.created')} · ${t('flow.operator')}`,
        cell: (c) => (
          <div>
            <span className="nowrap">{fmt.dateTime(c.getValue())}</span>
            <div className="cell-note">
              <OperatorName operator={c.row.original.operator} />
            </div>
          </div>
        ),
      }),
      fcol.accessor('requestId', { header: t('flow.requestId'), cell: (c) => <code className="small nowrap">{c.getValue()}</code> }),
    ],
    [t, fmt],
  );

  if (!res.data) {
    return (
      <>
        <PageHeader title={t('coupon.title', { code: formatCouponCode(code) })} actions={<Link to="/coupons" className="btn">← {t('state.back')}</Link>} />
        {res.error ? <ErrorState error={res.error} onRetry={() => reexecute({ requestPolicy: 'network-only' })} /> : <Loading />}
      </>
    );
  }
  const c = res.data.coupon;
  return (
    <>
      <PageHeader
        title={
          <span className="title-with-badge">
            <span className="mono">{formatCouponCode(c.code)}</span> <StatusBadge status={c.status} />
          </span>
        }
        subtitle={c.campaign.name}
        actions={<Link to="/coupons" className="btn">← {t('state.back')}</Link>}
      />
      {refunded && (
        <Alert kind="success" title={t('redeem.refunded', { amount: fmt.money(refunded.amount) })}>
          {t('flow.refundNo')}: <code>{refunded.refundNo}</code>
          {refunded.reissued && (
            <div>
              <Link className="link mono" to={`/coupons/${refunded.reissued}`}>
                {t('redeem.reissuedCode', { code: formatCouponCode(refunded.reissued) })}
              </Link>
            </div>
          )}
        </Alert>
      )}
      {voided && <Alert kind="success">{t('coupon.voided')}</Alert>}
      {role === 'ADMIN' && c.status === 'UNUSED' && (
        <VoidPanel
          code={c.code}
          onVoided={() => {
            setVoided(true);
            reexecute({ requestPolicy: 'network-only' });
          }}
        />
      )}
      <div className="facts">
        <div className="fact">
          <div className="fact-label">{t('coupon.worth')}</div>
          <div className="fact-value">{worth(c.campaign)}</div>
        </div>
        <div className="fact">
          <div className="fact-label">{t('coupon.validity')}</div>
          <div className="fact-value">
            {fmt.dateTimeShort(c.validFrom)} – {fmt.dateTimeShort(c.validTo)}
          </div>
        </div>
        <div className="fact">
          <div className="fact-label">{t('campaigns.stores')}</div>
          <div className="fact-value">{c.campaign.stores.length ? c.campaign.stores.map((s) => s.name).join(', ') : t('campaigns.allStores')}</div>
        </div>
        <div className="fact">
          <div className="fact-label">{t('coupon.customer')}</div>
          <div className="fact-value">{c.customerRef ?? '—'}</div>
        </div>
        {c.usableNextAt && (
          <div className="fact">
            <div className="fact-label">{t('coupon.usableNext')}</div>
            <div className="fact-value" data-testid="coupon-usable-next">
              {fmt.dateTimeShort(c.usableNextAt)}
            </div>
          </div>
        )}
        {c.usesTotal > 1 && (
          <div className="fact">
            <div className="fact-label">{t('coupon.usesLeft')}</div>
            <div className="fact-value" data-testid="coupon-uses-left">
              {t('coupon.usesOf', { left: c.usesLeft, total: c.usesTotal })}
            </div>
          </div>
        )}
        <div className="fact">
          <div className="fact-label">{t('coupon.version')}</div>
          <div className="fact-value">v{c.version}</div>
        </div>
      </div>
      <div className="stack">
        <Card title={t('coupon.timeline')}>
          <Timeline coupon={c} />
        </Card>
        <div className="stack">
          <Card title={t('coupon.redemptions')}>
            {c.redemptions.length === 0 ? (
              <Empty>{t('coupon.redemptionsEmpty')}</Empty>
            ) : (
              <DataTable testId="coupon-redemptions" columns={rcols} data={c.redemptions} fetching={res.fetching} rowKey={(r) => r.redeemNo} />
            )}
          </Card>
          <Card title={t('coupon.refunds')}>
            {c.refunds.length === 0 ? (
              <Empty>{t('coupon.refundsEmpty')}</Empty>
            ) : (
              <DataTable testId="coupon-refunds" columns={fcols} data={c.refunds} fetching={res.fetching} rowKey={(r) => r.refundNo} />
            )}
          </Card>
        </div>
      </div>
    </>
  );
}
