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
  /** pendingKey is the key of the open attempt, if any, so a form can tell whether its retry still applies. */
  const pendingKey = () => (canRetry(attempt.current) ? attempt.current!.key : null);
  return { fetching, run, retry, pendingKey };
}
