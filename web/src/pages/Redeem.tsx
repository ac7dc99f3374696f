import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { useI18n } from '../app/i18n';
import { useFormat, useViewer } from '../app/viewer';
import { StatusBadge } from '../components/Badge';
import { PageHeader } from '../components/Page';
import { RefundForm } from '../components/RefundForm';
import { Alert, useErrorText } from '../components/States';
import { useWorth } from '../components/Worth';
import { graphql } from '../gql';
import type { RedeemCouponMutation, RedeemCouponsMutation } from '../gql/graphql';
import { formatCouponCode, lookupCode } from '../lib/code';
import { firstErrorCode, isNetworkError, isOverloaded } from '../lib/errors';
import { parseYuanToFen } from '../lib/money';
import { attemptKey, beginAttempt, settleAttempt, type Attempt } from '../lib/requestId';

const CouponPreviewDocument = graphql(`
  query CouponPreview($code: String!) {
    coupon(code: $code) {
      id
      code
      status
      version
      validFrom
      validTo
      campaign {
        id
        name
        type
        value
        maxDiscount
        minSpend
        refundWindowMinutes
      }
    }
  }
`);

const RedemptionQuoteDocument = graphql(`
  query RedemptionQuote($code: String!, $storeId: ID!, $orderAmount: Int!) {
    redemptionQuote(code: $code, storeId: $storeId, orderAmount: $orderAmount) {
      eligible
      rejectReason
      discountAmount
      payAmount
    }
  }
`);

const RedeemCouponDocument = graphql(`
  mutation RedeemCoupon($input: RedeemCouponInput!) {
    redeemCoupon(input: $input) {
      redeemNo
      requestId
      status
      rejectReason
      releaseReason
      orderAmount
      discountAmount
      orderRef
      createdAt
      finishedAt
      store {
        id
        name
      }
      coupon {
        id
        code
        status
        version
      }
    }
  }
`);

// Several codes for one order: the server quotes and redeems them all or
// none (quoteCoupons, redeemCoupons); the console only shows its answer.
const CouponsQuoteDocument = graphql(`
  query CouponsQuote($codes: [String!]!, $storeId: ID!, $orderAmount: Int!) {
    quoteCoupons(codes: $codes, storeId: $storeId, orderAmount: $orderAmount) {
      eligible
      discountAmount
      amountToPay
      quotes {
        eligible
        rejectReason
        reasons
        discountAmount
        coupon {
          id
          code
          status
          campaign {
            id
            name
          }
        }
      }
    }
  }
`);

const RedeemCouponsDocument = graphql(`
  mutation RedeemCoupons($input: RedeemCouponsInput!) {
    redeemCoupons(input: $input) {
      status
      requestId
      discountAmount
      amountToPay
      orderRef
      redemptions {
        redeemNo
        status
        releaseReason
        discountAmount
        coupon {
          id
          code
          status
          version
        }
      }
      reasons {
        code
        rejectReason
        reasons
      }
    }
  }
`);

/** The most codes one order takes (services.MaxCodesPerOrder). */
const MAX_CODES = 10;

type Redeemed = RedeemCouponMutation['redeemCoupon'];
type RedeemedOrder = RedeemCouponsMutation['redeemCoupons'];
type Outcome =
  | { kind: 'result'; r: Redeemed }
  | { kind: 'order'; o: RedeemedOrder }
  | { kind: 'network' }
  | { kind: 'busy' }
  | { kind: 'error'; text: string };

export function RedeemPage() {
  const { t, tk } = useI18n();
  const { stores, storeIds, role } = useViewer();
  const fmt = useFormat();
  const worth = useWorth();
  const errorText = useErrorText();
  const usable = role === 'CLERK' ? stores.filter((s) => storeIds.includes(s.id)) : stores;
  const [storeId, setStoreId] = useState(() => (usable.length === 1 ? usable[0].id : (usable[0]?.id ?? '')));
  const [codeRaw, setCodeRaw] = useState('');
  const [amountRaw, setAmountRaw] = useState('');
  const [touched, setTouched] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const attempt = useRef<Attempt | null>(null);
  const codeInput = useRef<HTMLInputElement>(null);
  const [{ fetching }, redeem] = useMutation(RedeemCouponDocument);
  // More codes for the same order, after the first; with any, the order is
  // redeemed with redeemCoupons, all codes or none.
  const [extraRaw, setExtraRaw] = useState<string[]>([]);
  const [{ fetching: fetchingOrder }, redeemOrder] = useMutation(RedeemCouponsDocument);

  const norm = lookupCode(codeRaw);
  const code = norm.ok ? norm.code : '';
  const fen = parseYuanToFen(amountRaw);
  // A generated code is complete once its check symbol matches; a code the
  // merchant imported has no check, so it is looked up once the field is left.
  const [codeDone, setCodeDone] = useState('');
  const [preview] = useQuery({ query: CouponPreviewDocument, variables: { code }, pause: !code || (norm.ok && !norm.generated && codeDone !== code) });
  const coupon = code && preview.data?.coupon.code === code ? preview.data.coupon : null;
  // The server judges eligibility and the price by the same rules as the
  // redemption itself; the console only shows its answer.
  const [quoteRes] = useQuery({
    query: RedemptionQuoteDocument,
    variables: { code, storeId, orderAmount: fen ?? 0 },
    pause: !coupon || !storeId,
    requestPolicy: 'network-only',
  });
  const quote = coupon ? quoteRes.data?.redemptionQuote : undefined;
  const eligible = quote ? quote.rejectReason !== 'STORE_NOT_ELIGIBLE' : null;
  const belowMin = quote && fen !== null && quote.rejectReason === 'MIN_SPEND_NOT_MET';

  const multi = extraRaw.length > 0;
  const extras = extraRaw.map((raw) => lookupCode(raw));
  const orderCodes = [code, ...extras.map((x) => (x.ok ? x.code : ''))];
  const repeated = (i: number) => orderCodes[i] !== '' && orderCodes.indexOf(orderCodes[i]) < i;
  const orderReady = multi && norm.ok && extras.every((x) => x.ok) && !orderCodes.some((_, i) => repeated(i));
  const [orderQuoteRes] = useQuery({
    query: CouponsQuoteDocument,
    variables: { codes: orderCodes, storeId, orderAmount: fen ?? 0 },
    pause: !orderReady || !storeId || fen === null,
    requestPolicy: 'network-only',
  });
  const orderQuote = orderReady ? orderQuoteRes.data?.quoteCoupons : undefined;

  async function submitOrder() {
    if (!orderReady || fen === null || !storeId) return;
    const a = beginAttempt(attempt.current, attemptKey(orderCodes.join(','), storeId, fen));
    attempt.current = a;
    const res = await redeemOrder(
      { input: { codes: orderCodes, storeId, orderAmount: fen, requestId: a.requestId } },
      { additionalTypenames: ['Redemption'] },
    );
    if (res.data) {
      attempt.current = settleAttempt(a, { kind: 'result', status: res.data.redeemCoupons.status });
      setOutcome({ kind: 'order', o: res.data.redeemCoupons });
    } else if (isNetworkError(res.error)) {
      attempt.current = settleAttempt(a, { kind: 'network' });
      setOutcome({ kind: 'network' });
    } else if (isOverloaded(res.error)) {
      attempt.current = settleAttempt(a, { kind: 'error', code: 'OVERLOADED' });
      setOutcome({ kind: 'busy' });
    } else {
      attempt.current = settleAttempt(a, { kind: 'error', code: firstErrorCode(res.error) });
      setOutcome({ kind: 'error', text: errorText(res.error) });
    }
  }

  async function submit(e?: React.FormEvent) {
    e?.preventDefault();
    setTouched(true);
    if (multi) return submitOrder();
    if (!norm.ok || fen === null || !storeId) return;
    const a = beginAttempt(attempt.current, attemptKey(code, storeId, fen));
    attempt.current = a;
    const res = await redeem({ input: { code, storeId, orderAmount: fen, requestId: a.requestId } }, { additionalTypenames: ['Redemption'] });
    if (res.data) {
      attempt.current = settleAttempt(a, { kind: 'result', status: res.data.redeemCoupon.status });
      setOutcome({ kind: 'result', r: res.data.redeemCoupon });
    } else if (isNetworkError(res.error)) {
      attempt.current = settleAttempt(a, { kind: 'network' });
      setOutcome({ kind: 'network' });
    } else if (isOverloaded(res.error)) {
      attempt.current = settleAttempt(a, { kind: 'error', code: 'OVERLOADED' });
      setOutcome({ kind: 'busy' });
    } else {
      attempt.current = settleAttempt(a, { kind: 'error', code: firstErrorCode(res.error) });
      setOutcome({ kind: 'error', text: errorText(res.error) });
    }
  }

  function next() {
    setExtraRaw([]);
    setCodeRaw('');
    setAmountRaw('');
    setTouched(false);
    setOutcome(null);
    attempt.current = null;
    codeInput.current?.focus();
  }

  if (usable.length === 0) {
    return (
      <>
        <PageHeader title={t('redeem.title')} />
        <Alert kind="warning">{t('redeem.noStores')}</Alert>
      </>
    );
  }

  const retryable = attempt.current && attempt.current.state === 'unknown';
  const result = outcome?.kind === 'result' ? outcome.r : null;
  const locked = result?.status === 'SUCCEEDED' || (outcome?.kind === 'order' && outcome.o.status === 'SUCCEEDED');
  const busy = fetching || fetchingOrder;
  return (
    <div className="redeem">
      <PageHeader title={t('redeem.title')} />
      <div className="redeem-grid">
        <form className="redeem-form card" onSubmit={submit} data-testid="redeem-form">
          <div className="card-body">
            <label className="field">
              <span className="field-label">{t('redeem.store')}</span>
              {usable.length === 1 ? (
                <div className="store-fixed">{usable[0].name}</div>
              ) : (
                <div className="store-picker" role="radiogroup" aria-label={t('redeem.store')}>
                  {usable.map((s) => (
                    <button
                      key={s.id}
                      type="button"
                      role="radio"
                      aria-checked={storeId === s.id}
                      className={storeId === s.id ? 'active' : ''}
                      disabled={locked}
                      onClick={() => setStoreId(s.id)}
                    >
                      {s.name}
                    </button>
                  ))}
                </div>
              )}
            </label>
            <label className="field">
              <span className="field-label">{t('redeem.code')}</span>
              <input
                ref={codeInput}
                name="code"
                className="input-xl mono"
                value={codeRaw}
                placeholder={t('redeem.codePlaceholder')}
                onChange={(e) => setCodeRaw(e.target.value)}
                onBlur={() => setCodeDone(code)}
                readOnly={locked}
                autoFocus
                autoComplete="off"
                autoCapitalize="characters"
                spellCheck={false}
                enterKeyHint="next"
              />
              {!norm.ok && (touched || codeRaw.replace(/[-\s]/g, '').length >= 13) && <span className="field-error">{tk(`code.${norm.problem}`)}</span>}
            </label>
            {extraRaw.map((raw, i) => {
              const x = extras[i];
              return (
                <div className="field extra-code" key={i} data-testid={`extra-code-${i + 1}`}>
                  <span className="field-label">{t('redeem.codeN', { n: i + 2 })}</span>
                  <div className="extra-code-row">
                    <input
                      name={`code${i + 2}`}
                      className="input-xl mono"
                      value={raw}
                      placeholder={t('redeem.codePlaceholder')}
                      onChange={(e) => setExtraRaw(extraRaw.map((v, j) => (j === i ? e.target.value : v)))}
                      readOnly={locked}
                      autoFocus
                      autoComplete="off"
                      autoCapitalize="characters"
                      spellCheck={false}
                      aria-label={t('redeem.codeN', { n: i + 2 })}
                    />
                    {!locked && (
                      <button
                        type="button"
                        className="btn btn-ghost"
                        aria-label={t('redeem.removeCode', { n: i + 2 })}
                        data-testid={`remove-code-${i + 1}`}
                        onClick={() => setExtraRaw(extraRaw.filter((_, j) => j !== i))}
                      >
                        ✕
                      </button>
                    )}
                  </div>
                  {!x.ok && (touched || raw.replace(/[-\s]/g, '').length >= 13) && <span className="field-error">{tk(`code.${x.problem}`)}</span>}
                  {repeated(i + 1) && <span className="field-error">{t('redeem.codeTwice')}</span>}
                </div>
              );
            })}
            {!locked && extraRaw.length < MAX_CODES - 1 && (
              <button type="button" className="btn btn-ghost add-code" data-testid="add-code" onClick={() => setExtraRaw([...extraRaw, ''])}>
                + {t('redeem.addCode')}
              </button>
            )}
            {multi && <p className="muted small">{t('redeem.orderHint', { n: MAX_CODES })}</p>}
            <label className="field">
              <span className="field-label">{t('redeem.amount')}</span>
              <div className="input-money">
                <span>¥</span>
                <input
                  name="amount"
                  className="input-xl"
                  inputMode="decimal"
                  value={amountRaw}
                  placeholder={t('redeem.amountPlaceholder')}
                  onChange={(e) => setAmountRaw(e.target.value)}
                  readOnly={locked}
                  autoComplete="off"
                  enterKeyHint="go"
                />
              </div>
              {fen === null && (touched || amountRaw !== '') && <span className="field-error">{t('redeem.badAmount')}</span>}
            </label>
            {locked ? (
              <button type="button" className="btn btn-primary btn-xl" onClick={next} data-testid="next-customer">
                {t('redeem.next')}
              </button>
            ) : (
              <button type="submit" className="btn btn-primary btn-xl" disabled={busy} data-testid="redeem-submit">
                {busy ? t('redeem.working') : retryable ? t('redeem.retry') : multi ? t('redeem.submitAll', { n: orderCodes.length }) : t('redeem.submit')}
              </button>
            )}
          </div>
        </form>

        <div className="redeem-side">
          {orderQuote && fen !== null && !locked && (
            <div className="card coupon-preview" data-testid="order-preview">
              <div className="card-body">
                <div className="preview-name">{t('redeem.orderTitle', { n: orderQuote.quotes.length })}</div>
                <ol className="order-codes">
                  {orderQuote.quotes.map((q) => (
                    <li key={q.coupon.id} className={q.eligible ? 'ok' : 'bad'}>
                      <span className="mono">{formatCouponCode(q.coupon.code)}</span> <span className="muted">{q.coupon.campaign.name}</span>
                      {q.eligible ? (
                        <span className="order-code-note"> −{fmt.money(q.discountAmount)}</span>
                      ) : (
                        <span className="order-code-note">{q.reasons.map((r) => tk(`reject.${r}`)).join(' ')}</span>
                      )}
                    </li>
                  ))}
                </ol>
                <ul className="preview-facts">
                  {orderQuote.eligible ? (
                    <li className="ok" data-testid="order-price-preview">
                      {t('redeem.preview', { discount: fmt.money(orderQuote.discountAmount), pay: fmt.money(orderQuote.amountToPay) })}
                    </li>
                  ) : (
                    <li className="bad">{t('redeem.orderNotEligible')}</li>
                  )}
                </ul>
              </div>
            </div>
          )}
          {code && !coupon && preview.fetching && <div className="card card-body muted">{t('redeem.lookup')}</div>}
          {code && preview.error && !coupon && <Alert kind="error">{errorText(preview.error)}</Alert>}
          {coupon && !multi && (
            <div className="card coupon-preview" data-testid="coupon-preview">
              <div className="card-body">
                <div className="preview-top">
                  <Link to={`/coupons/${coupon.code}`} className="mono link">
                    {formatCouponCode(coupon.code)}
                  </Link>
                  <StatusBadge status={coupon.status} />
                </div>
                <div className="preview-worth">{worth(coupon.campaign, false)}</div>
                <div className="preview-name">{coupon.campaign.name}</div>
                <ul className="preview-facts">
                  {coupon.campaign.minSpend > 0 && <li>{t('worth.minSpend', { amount: fmt.money(coupon.campaign.minSpend) })}</li>}
                  <li className={eligible ? 'ok' : 'bad'}>{eligible ? t('redeem.eligible') : t('redeem.notEligible')}</li>
                  {belowMin && <li className="bad">{t('redeem.belowMin', { amount: fmt.money(coupon.campaign.minSpend) })}</li>}
                  {quote?.rejectReason && quote.rejectReason !== 'STORE_NOT_ELIGIBLE' && quote.rejectReason !== 'MIN_SPEND_NOT_MET' && (
                    <li className="bad" data-testid="quote-reject">{tk(`reject.${quote.rejectReason}`)}</li>
                  )}
                  {quote?.eligible && fen !== null && fen > 0 && (
                    <li className="ok" data-testid="price-preview">
                      {t('redeem.preview', { discount: fmt.money(quote.discountAmount), pay: fmt.money(quote.payAmount) })}
                    </li>
                  )}
                  <li>
                    {t('coupon.validity')}: {fmt.dateTimeShort(coupon.validFrom)} – {fmt.dateTimeShort(coupon.validTo)}
                  </li>
                </ul>
              </div>
            </div>
          )}

          {outcome && <OutcomePanel outcome={outcome} attempt={attempt.current} refundMinutes={coupon?.campaign.refundWindowMinutes ?? null} />}
        </div>
      </div>
    </div>
  );
}

function OutcomePanel({ outcome, attempt, refundMinutes }: { outcome: Outcome; attempt: Attempt | null; refundMinutes: number | null }) {
  const { t, tk } = useI18n();
  const { role } = useViewer();
  const fmt = useFormat();
  const idLine = attempt && <div className="outcome-id">{t('redeem.requestId', { id: attempt.requestId })}</div>;
  if (outcome.kind === 'network') {
    return (
      <div className="outcome outcome-warning" role="alert" data-testid="outcome">
        <div className="outcome-icon">!</div>
        <div className="outcome-title">{t('redeem.networkTitle')}</div>
        <p>{t('redeem.networkDetail')}</p>
        {idLine}
      </div>
    );
  }
  if (outcome.kind === 'busy') {
    return (
      <div className="outcome outcome-warning" role="alert" data-testid="outcome" data-code="OVERLOADED">
        <div className="outcome-icon">…</div>
        <div className="outcome-title">{t('redeem.busyTitle')}</div>
        <p>{t('redeem.busyDetail')}</p>
        {idLine}
      </div>
    );
  }
  if (outcome.kind === 'order') {
    return <OrderOutcome o={outcome.o} idLine={idLine} />;
  }
  if (outcome.kind === 'error') {
    return (
      <div className="outcome outcome-danger" role="alert" data-testid="outcome">
        <div className="outcome-icon">✕</div>
        <div className="outcome-title">{t('redeem.rejected')}</div>
        <p>{outcome.text}</p>
        {idLine}
      </div>
    );
  }
  const r = outcome.r;
  if (r.status === 'SUCCEEDED') {
    const canRefund = role === 'ADMIN' || (refundMinutes ?? 0) > 0;
    return (
      <div className="outcome outcome-success" role="status" data-testid="outcome" data-status={r.status}>
        <div className="outcome-icon">✓</div>
        <div className="outcome-title">{t('redeem.ok')}</div>
        <p className="outcome-big">{t('redeem.okDetail', { discount: fmt.money(r.discountAmount), pay: fmt.money(Math.max(0, r.orderAmount - r.discountAmount)) })}</p>
        <dl className="outcome-facts">
          <dt>{t('flow.redeemNo')}</dt>
          <dd>
            <code data-testid="redeem-no">{r.redeemNo}</code>
          </dd>
          {r.orderRef && (
            <>
              <dt>{t('flow.orderRef')}</dt>
              <dd>
                <code>{r.orderRef}</code>
              </dd>
            </>
          )}
          <dt>{t('common.store')}</dt>
          <dd>{r.store.name}</dd>
        </dl>
        {idLine}
        {canRefund && (
          <div className="outcome-refund">
            <div className="outcome-subtitle">{t('redeem.refund')}</div>
            {refundMinutes !== null && refundMinutes > 0 && <p className="muted small">{t('redeem.refundWindow', { n: refundMinutes })}</p>}
            <RefundForm redeemNo={r.redeemNo} large />
          </div>
        )}
      </div>
    );
  }
  if (r.status === 'PROCESSING') {
    return (
      <div className="outcome outcome-warning" role="status" data-testid="outcome" data-status={r.status}>
        <div className="outcome-icon">…</div>
        <div className="outcome-title">{t('redeem.processing')}</div>
        <p>{t('redeem.processingDetail')}</p>
        {idLine}
      </div>
    );
  }
  const reason = r.rejectReason ? tk(`reject.${r.rejectReason}`) : r.releaseReason ? tk(`release.${r.releaseReason}`) : '';
  return (
    <div className="outcome outcome-danger" role="alert" data-testid="outcome" data-status={r.status}>
      <div className="outcome-icon">✕</div>
      <div className="outcome-title">{r.status === 'RELEASED' ? t('redeem.released') : t('redeem.rejected')}</div>
      <p className="outcome-big">{reason}</p>
      <dl className="outcome-facts">
        <dt>{t('flow.redeemNo')}</dt>
        <dd>
          <code>{r.redeemNo}</code>
        </dd>
      </dl>
      {idLine}
    </div>
  );
}

/** OrderOutcome shows the answer to redeemCoupons: every redemption of the
 * order, or every code's reasons when none was taken. */
function OrderOutcome({ o, idLine }: { o: RedeemedOrder; idLine: React.ReactNode }) {
  const { t, tk } = useI18n();
  const fmt = useFormat();
  if (o.status === 'SUCCEEDED') {
    return (
      <div className="outcome outcome-success" role="status" data-testid="outcome" data-status={o.status}>
        <div className="outcome-icon">✓</div>
        <div className="outcome-title">{t('redeem.okOrder', { n: o.redemptions.length })}</div>
        <p className="outcome-big">{t('redeem.okDetail', { discount: fmt.money(o.discountAmount), pay: fmt.money(o.amountToPay) })}</p>
        <table className="order-table" data-testid="order-redemptions">
          <thead>
            <tr>
              <th>{t('redeem.code')}</th>
              <th>{t('flow.redeemNo')}</th>
              <th className="num">{t('redeem.discount')}</th>
            </tr>
          </thead>
          <tbody>
            {o.redemptions.map((r) => (
              <tr key={r.redeemNo}>
                <td className="mono">{formatCouponCode(r.coupon.code)}</td>
                <td>
                  <code>{r.redeemNo}</code>
                </td>
                <td className="num">{fmt.money(r.discountAmount)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {o.orderRef && (
          <dl className="outcome-facts">
            <dt>{t('flow.orderRef')}</dt>
            <dd>
              <code>{o.orderRef}</code>
            </dd>
          </dl>
        )}
        {idLine}
      </div>
    );
  }
  if (o.status === 'PROCESSING') {
    return (
      <div className="outcome outcome-warning" role="status" data-testid="outcome" data-status={o.status}>
        <div className="outcome-icon">…</div>
        <div className="outcome-title">{t('redeem.processing')}</div>
        <p>{t('redeem.processingDetail')}</p>
        {idLine}
      </div>
    );
  }
  if (o.status === 'RELEASED') {
    const reason = o.redemptions[0]?.releaseReason;
    return (
      <div className="outcome outcome-danger" role="alert" data-testid="outcome" data-status={o.status}>
        <div className="outcome-icon">✕</div>
        <div className="outcome-title">{t('redeem.releasedOrder')}</div>
        {reason && <p className="outcome-big">{tk(`release.${reason}`)}</p>}
        {idLine}
      </div>
    );
  }
  return (
    <div className="outcome outcome-danger" role="alert" data-testid="outcome" data-status={o.status}>
      <div className="outcome-icon">✕</div>
      <div className="outcome-title">{t('redeem.rejectedOrder')}</div>
      <ol className="order-codes" data-testid="order-reasons">
        {o.reasons.map((c) => (
          <li key={c.code} className={c.reasons.length ? 'bad' : 'ok'}>
            <span className="mono">{formatCouponCode(c.code)}</span>{' '}
            <span className="order-code-note">{c.reasons.length ? c.reasons.map((r) => tk(`reject.${r}`)).join(' ') : t('redeem.codeFine')}</span>
          </li>
        ))}
      </ol>
      {idLine}
    </div>
  );
}
