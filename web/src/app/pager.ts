import { useCallback, useState } from 'react';

/**
 * useCursorPager keeps the cursors of the pages visited so far, so "previous"
 * works with a forward-only API: page n is fetched with after = cursors[n-1].
 */
export function useCursorPager(resetKey: string) {
  const [state, setState] = useState<{ key: string; cursors: string[] }>({ key: resetKey, cursors: [] });
  const cursors = state.key === resetKey ? state.cursors : [];
  if (state.key !== resetKey) setState({ key: resetKey, cursors: [] });
  const after = cursors.length > 0 ? cursors[cursors.length - 1] : undefined;
  const next = useCallback(
    (endCursor: string | null | undefined) => {
      if (endCursor) setState((s) => ({ key: s.key, cursors: [...s.cursors, endCursor] }));
    },
    [],
  );
  const prev = useCallback(() => setState((s) => ({ key: s.key, cursors: s.cursors.slice(0, -1) })), []);
  return { after, page: cursors.length + 1, hasPrev: cursors.length > 0, next, prev };
}
