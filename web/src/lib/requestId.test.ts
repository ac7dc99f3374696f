import { describe, expect, it } from 'vitest';
import { attemptKey, beginAttempt, canRetry, newRequestId, outcomeOfError, settleAttempt, type Attempt } from './requestId';

let n = 0;
const makeId = () => `id-${++n}`;

describe('request ids of the redeem screen', () => {
  const key = attemptKey('228QJY6NEMKV2', '1', 6800);

  it('reuses the id after a network error, so a retry cannot redeem twice', () => {
    const first = beginAttempt(null, key, makeId);
    const lost = settleAttempt(first, { kind: 'network' });
    const retry = beginAttempt(lost, key, makeId);
    expect(retry.requestId).toBe(first.requestId);
    expect(retry.state).toBe('pending');
  });

  it('reuses the id while the redemption is still PROCESSING', () => {
    const first = beginAttempt(null, key, makeId);
    const held = settleAttempt(first, { kind: 'result', status: 'PROCESSING' });
    expect(beginAttempt(held, key, makeId).requestId).toBe(first.requestId);
  });

  it('reuses the id after an INTERNAL error, whose outcome is unknown', () => {
    const first = beginAttempt(null, key, makeId);
    const failed = settleAttempt(first, { kind: 'error', code: 'INTERNAL' });
    expect(beginAttempt(failed, key, makeId).requestId).toBe(first.requestId);
  });

  it('reuses the id after OVERLOADED: the server refused before it ran anything', () => {
    const first = beginAttempt(null, key, makeId);
    const refused = settleAttempt(first, { kind: 'error', code: 'OVERLOADED' });
    expect(refused.state).toBe('unknown');
    const retry = beginAttempt(refused, key, makeId);
    expect(retry.requestId).toBe(first.requestId);
    expect(retry.state).toBe('pending');
  });

  it('reuses the id after UNAVAILABLE: the token could not be checked, nothing ran', () => {
    const first = beginAttempt(null, key, makeId);
    const refused = settleAttempt(first, { kind: 'error', code: 'UNAVAILABLE' });
    expect(refused.state).toBe('unknown');
    expect(beginAttempt(refused, key, makeId).requestId).toBe(first.requestId);
  });

  it('keeps the id of a lost try open when its retry is refused as OVERLOADED', () => {
    // The first try may have redeemed; a fresh id after the refusal would
    // find the coupon taken and report a rejection instead of that success.
    const first = beginAttempt(null, key, makeId);
    const lost = settleAttempt(first, { kind: 'network' });
    const refused = settleAttempt(beginAttempt(lost, key, makeId), { kind: 'error', code: 'OVERLOADED' });
    const again = beginAttempt(refused, key, makeId);
    expect(again.requestId).toBe(first.requestId);
    const done = settleAttempt(again, { kind: 'result', status: 'SUCCEEDED' });
    expect(beginAttempt(done, key, makeId).requestId).not.toBe(first.requestId);
  });

  it('starts a new id after OVERLOADED when the parameters change', () => {
    const first = beginAttempt(null, key, makeId);
    const refused = settleAttempt(first, { kind: 'error', code: 'OVERLOADED' });
    expect(beginAttempt(refused, attemptKey('228QJY6NEMKV2', '1', 7000), makeId).requestId).not.toBe(first.requestId);
  });

  it.each(['SUCCEEDED', 'REJECTED', 'RELEASED'])('starts a new id after a final %s answer', (status) => {
    const first = beginAttempt(null, key, makeId);
    const done = settleAttempt(first, { kind: 'result', status });
    expect(beginAttempt(done, key, makeId).requestId).not.toBe(first.requestId);
  });

  it.each(['BAD_USER_INPUT', 'COUPON_NOT_FOUND', 'FORBIDDEN', 'IDEMPOTENCY_KEY_REUSED'])('starts a new id after a definite %s error', (code) => {
    const first = beginAttempt(null, key, makeId);
    const done = settleAttempt(first, { kind: 'error', code });
    expect(beginAttempt(done, key, makeId).requestId).not.toBe(first.requestId);
  });

  it('starts a new id when the parameters change, even after a network error', () => {
    const first = beginAttempt(null, key, makeId);
    const lost: Attempt = settleAttempt(first, { kind: 'network' });
    const other = beginAttempt(lost, attemptKey('228QJY6NEMKV2', '1', 7000), makeId);
    expect(other.requestId).not.toBe(first.requestId);
  });

  it('makes ids the API accepts: 1-64 of letters, digits, . _ : -', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = newRequestId();
      expect(id).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(1000);
  });
});

describe('request ids of the admin mutations (createCampaign, issueCoupons, createToken, voidCoupon)', () => {
  const key = attemptKey(JSON.stringify({ campaignId: '7', count: 20 }));

  it('classifies a failed request: no answer, or an answer with a code', () => {
    expect(outcomeOfError({ networkError: new TypeError('Failed to fetch'), graphQLErrors: [] })).toEqual({ kind: 'network' });
    expect(outcomeOfError(undefined)).toEqual({ kind: 'network' });
    expect(outcomeOfError({ graphQLErrors: [{ extensions: { code: 'QUOTA_EXCEEDED' } }] })).toEqual({ kind: 'error', code: 'QUOTA_EXCEEDED' });
    expect(outcomeOfError({ networkError: new Error('503'), graphQLErrors: [{ extensions: { code: 'OVERLOADED' } }] })).toEqual({ kind: 'error', code: 'OVERLOADED' });
    expect(outcomeOfError({ graphQLErrors: [{ extensions: null }] })).toEqual({ kind: 'error', code: undefined });
  });

  it('keeps the id open after no answer, INTERNAL or OVERLOADED, and the retry resends it', () => {
    for (const error of [
      { networkError: new TypeError('Failed to fetch'), graphQLErrors: [] },
      { graphQLErrors: [{ extensions: { code: 'INTERNAL' } }] },
      { graphQLErrors: [{ extensions: { code: 'OVERLOADED' } }] },
    ]) {
      const first = beginAttempt(null, key, makeId);
      const settled = settleAttempt(first, outcomeOfError(error));
      expect(canRetry(settled)).toBe(true);
      expect(beginAttempt(settled, key, makeId).requestId).toBe(first.requestId);
    }
  });

  it('retires the id after a definite refusal or a result', () => {
    const first = beginAttempt(null, key, makeId);
    const refused = settleAttempt(first, outcomeOfError({ graphQLErrors: [{ extensions: { code: 'BAD_USER_INPUT' } }] }));
    expect(canRetry(refused)).toBe(false);
    expect(beginAttempt(refused, key, makeId).requestId).not.toBe(first.requestId);
    const done = settleAttempt(first, { kind: 'result', status: 'DONE' });
    expect(canRetry(done)).toBe(false);
    expect(canRetry(null)).toBe(false);
  });

  it('starts a new id when the parameters change, even with the old one open', () => {
    const first = beginAttempt(null, key, makeId);
    const lost = settleAttempt(first, { kind: 'network' });
    expect(beginAttempt(lost, attemptKey(JSON.stringify({ campaignId: '7', count: 21 })), makeId).requestId).not.toBe(first.requestId);
  });
});
