import { useRef, useState } from 'react';
import { useMutation } from 'urql';
import { useI18n } from '../app/i18n';
import { useFormat, useViewer } from '../app/viewer';
import { graphql } from '../gql';
import type { RefundRedemptionMutation } from '../gql/graphql';
import { formatCouponCode } from '../lib/code';
import { firstErrorCode, isNetworkError, isOverloaded } from '../lib/errors';
import { attemptKey, beginAttempt, settleAttempt, type Attempt } from '../lib/requestId';
import { Alert, useErrorText } from './States';

const RefundRedemptionDocument = graphql(`
  mutation RefundRedemption($input: RefundRedemptionInput!) {
    refundRedemption(input: $input) {
      refundNo
      requestId
      status
      amount
      reason
      createdAt
      reissuedCoupon {
        code
      }
      redemption {
        redeemNo
        refund {
          refundNo
        }
        coupon {
          id
          status
          version
        }
      }
    }
  }
`);

type Refunded = RefundRedemptionMutation['refundRedemption'];

/**
 * RefundForm refunds one redemption with its own request id, reused when the
 * previous try got no answer, so a retried refund never runs twice.
 */
export function RefundForm({ redeemNo, large, onDone, showResult = true }: { redeemNo: string; large?: boolean; onDone?: (r: Refunded) => void; showResult?: boolean }) {
  const { t } = useI18n();
  const { role } = useViewer();
  const { money } = useFormat();
  const errorText = useErrorText();
  const [reason, setReason] = useState('');
  const [reissue, setReissue] = useState(false);
  const attempt = useRef<Attempt | null>(null);
  // retry: the id is still open (no answer, or OVERLOADED before the refund ran), so the button resends it.
  const [result, setResult] = useState<{ ok?: Refunded; error?: string; retry?: boolean } | null>(null);
  const [{ fetching }, refund] = useMutation(RefundRedemptionDocument);

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const a = beginAttempt(attempt.current, attemptKey(redeemNo, reason.trim(), String(reissue)));
    attempt.current = a;
    const res = await refund({ input: { redeemNo, requestId: a.requestId, reason: reason.trim() || undefined, reissue: reissue || undefined } });
    if (res.data) {
      attempt.current = settleAttempt(a, { kind: 'result', status: res.data.refundRedemption.status });
      setResult({ ok: res.data.refundRedemption });
      onDone?.(res.data.refundRedemption);
    } else if (isNetworkError(res.error)) {
      attempt.current = settleAttempt(a, { kind: 'network' });
      setResult({ error: errorText(res.error), retry: true });
    } else if (isOverloaded(res.error)) {
      attempt.current = settleAttempt(a, { kind: 'error', code: 'OVERLOADED' });
      setResult({ error: errorText(res.error), retry: true });
    } else {
      attempt.current = settleAttempt(a, { kind: 'error', code: firstErrorCode(res.error) });
      setResult({ error: errorText(res.error) });
    }
  }

  if (result?.ok) {
    if (!showResult) return null;
    return (
      <Alert kind="success" title={t('redeem.refunded', { amount: money(result.ok.amount) })}>
        {t('flow.refundNo')}: <code>{result.ok.refundNo}</code>
        {result.ok.reissuedCoupon && (
          <div>
            {t('redeem.reissuedCode', { code: formatCouponCode(result.ok.reissuedCoupon.code) })}
          </div>
        )}
      </Alert>
    );
  }
  return (
    <form className={`refund-form ${large ? 'refund-form-large' : ''}`} onSubmit={submit} data-testid="refund-form">
      <input
        type="text"
        maxLength={500}
        placeholder={t('redeem.refundReason')}
        aria-label={t('redeem.refundReason')}
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      {role === 'ADMIN' && (
        <label className="check">
          <input type="checkbox" checked={reissue} onChange={(e) => setReissue(e.target.checked)} /> {t('redeem.reissue')}
        </label>
      )}
      <button type="submit" className={`btn btn-danger ${large ? 'btn-large' : 'btn-small'}`} disabled={fetching}>
        {fetching ? t('redeem.refunding') : result?.retry ? t('redeem.retry') : t('redeem.refundSubmit')}
      </button>
      {result?.error && <Alert kind={result.retry ? 'warning' : 'error'}>{result.error}</Alert>}
    </form>
  );
}
