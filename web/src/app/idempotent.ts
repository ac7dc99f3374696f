import { useCallback, useRef, useState } from 'react';
import { useMutation, type AnyVariables, type CombinedError, type OperationContext, type TypedDocumentNode } from 'urql';
import { beginAttempt, canRetry, outcomeOfError, settleAttempt, type Attempt } from '../lib/requestId';

export interface IdempotentResult<Data> {
  data?: Data;
  error?: CombinedError;
  /** retry: no final answer (no answer, INTERNAL, OVERLOADED); resending sends the same request id. */
  retry: boolean;
}

/**
 * useIdempotentMutation sends a mutation with a request id, as the redeem screen
 * does: a retry of the same parameters (same key) after a request without a
 * final answer reuses the id, so the server replays instead of doing it twice;
 * a final answer or other parameters start a new id.
 */
export function useIdempotentMutation<Data, Variables extends AnyVariables>(doc: TypedDocumentNode<Data, Variables>) {
  const [{ fetching }, mutate] = useMutation<Data, Variables>(doc);
  const attempt = useRef<Attempt | null>(null);
  const [retry, setRetry] = useState(false);
  const run = useCallback(
    async (key: string, vars: (requestId: string) => Variables, context?: Partial<OperationContext>): Promise<IdempotentResult<Data>> => {
      const a = beginAttempt(attempt.current, key);
      attempt.current = a;
      const res = await mutate(vars(a.requestId), context);
      attempt.current = res.data ? settleAttempt(a, { kind: 'result', status: 'DONE' }) : settleAttempt(a, outcomeOfError(res.error));
      const open = canRetry(attempt.current);
      setRetry(open);
      return { data: res.data ?? undefined, error: res.error, retry: open };
    },
    [mutate],
  );
  /**
   * clearRetry is for a form whose fields changed: the button stops offering a
   * retry. The open attempt stays: submitting the same fields again still
   * resends its id, other fields get a new one.
   */
  const clearRetry = useCallback(() => setRetry(false), []);
  return { fetching, run, retry, clearRetry };
}
