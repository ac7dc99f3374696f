// The redeem screen's request ids. The API stores the first result of each
// request id and replays it for every repeat, so a retry after a network error
// must send the same id (the first try may have gone through), while a new
// scan, or an attempt with different parameters, needs a fresh one (the same
// id with other parameters is IDEMPOTENCY_KEY_REUSED). A refusal before the
// request ran (OVERLOADED) settles nothing: the id stays open for the retry.

/** Attempt is one business request and what the console knows of its fate. */
export interface Attempt {
  requestId: string;
  /** key identifies the parameters (code, store, amount) the id was used with. */
  key: string;
  /** pending: sent; unknown: no final answer yet (network error, still PROCESSING, OVERLOADED); final: answered. */
  state: 'pending' | 'unknown' | 'final';
}

/** newRequestId returns a random id; getRandomValues works on plain-HTTP store LANs, randomUUID does not. */
export function newRequestId(prefix = 'web'): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** beginAttempt reuses the previous id when the same request's outcome is still unknown. */
export function beginAttempt(prev: Attempt | null, key: string, makeId: () => string = newRequestId): Attempt {
  if (prev && prev.key === key && prev.state !== 'final') {
    return { ...prev, state: 'pending' };
  }
  return { requestId: makeId(), key, state: 'pending' };
}

/** Codes of errors after which the server certainly stored nothing or a final answer. */
const DEFINITE_ERRORS = new Set([
  'BAD_USER_INPUT',
  'COUPON_NOT_FOUND',
  'NOT_FOUND',
  'FORBIDDEN',
  'UNAUTHENTICATED',
  'IDEMPOTENCY_KEY_REUSED',
  'INVALID_STATE',
  'REFUND_WINDOW_CLOSED',
  'CONFLICT',
]);

/**
 * Codes of refusals before the request ran (HTTP 503 OVERLOADED or UNAVAILABLE,
 * sent before the body is read). The answer is definite for this try, yet it must not
 * retire the id: an earlier try with the same id may have been lost on the
 * network after it went through, and only a retry with that id can find out.
 * Nothing of this try was stored, so resending the id is always safe.
 */
const NOT_RUN_ERRORS = new Set(['OVERLOADED', 'UNAVAILABLE']);

export type AttemptOutcome =
  | { kind: 'network' }
  | { kind: 'error'; code: string | undefined }
  | { kind: 'result'; status: string };

/** settleAttempt records what came back; only a final answer retires the id. */
export function settleAttempt(a: Attempt, outcome: AttemptOutcome): Attempt {
  switch (outcome.kind) {
    case 'network':
      return { ...a, state: 'unknown' };
    case 'error':
      if (outcome.code && NOT_RUN_ERRORS.has(outcome.code)) return { ...a, state: 'unknown' };
      return { ...a, state: outcome.code && DEFINITE_ERRORS.has(outcome.code) ? 'final' : 'unknown' };
    case 'result':
      return { ...a, state: outcome.status === 'PROCESSING' ? 'unknown' : 'final' };
  }
}

/** attemptKey names a request's parameters. */
export function attemptKey(...parts: (string | number)[]): string {
  return parts.join('|');
}

/** ErrorLike is what outcomeOfError reads of an urql CombinedError. */
interface ErrorLike {
  networkError?: unknown;
  graphQLErrors: { extensions?: Record<string, unknown> | null }[];
}

/**
 * outcomeOfError classifies a failed request for settleAttempt: no answer is
 * 'network'; an answer with errors is 'error' with the first code.
 */
export function outcomeOfError(error: ErrorLike | undefined | null): AttemptOutcome {
  if (!error || (error.networkError && error.graphQLErrors.length === 0)) return { kind: 'network' };
  const code = error.graphQLErrors.map((e) => e.extensions?.code).find((c): c is string => typeof c === 'string');
  return { kind: 'error', code };
}

/** canRetry tells whether the attempt's id is still open, so the button should offer to resend it. */
export function canRetry(a: Attempt | null): boolean {
  return !!a && a.state === 'unknown';
}
