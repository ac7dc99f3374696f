import { createContext, useContext, useMemo, type ReactNode } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import type { ViewerQuery } from '../gql/graphql';
import { formatDateTime } from '../lib/dates';
import { formatFen } from '../lib/money';
import { useI18n } from './i18n';

export const ViewerDocument = graphql(`
  query Viewer {
    viewer {
      role
      storeIds
      merchant {
        id
        name
        timezone
      }
    }
    stores(first: 100) {
      edges {
        node {
          id
          code
          name
        }
      }
    }
  }
`);

export type Role = ViewerQuery['viewer']['role'];
export type StoreRow = ViewerQuery['stores']['edges'][number]['node'];

interface ViewerState {
  role: Role;
  merchantName: string;
  timezone: string;
  storeIds: string[];
  stores: StoreRow[];
  storeName(id: string | null | undefined): string;
}

const ViewerContext = createContext<ViewerState | null>(null);

/** ViewerProvider loads who the token is; children render once it is known. */
export function ViewerProvider({ children, loading, failed }: { children: ReactNode; loading: ReactNode; failed: (retry: () => void) => ReactNode }) {
  const [res, reexecute] = useQuery({ query: ViewerDocument, requestPolicy: 'cache-first' });
  const value = useMemo<ViewerState | null>(() => {
    const v = res.data?.viewer;
    if (!v) return null;
    const stores = res.data?.stores.edges.map((e) => e.node) ?? [];
    const byId = new Map(stores.map((s) => [s.id, s]));
    return {
      role: v.role,
      merchantName: v.merchant.name,
      timezone: v.merchant.timezone,
      storeIds: v.storeIds,
      stores,
      storeName: (id) => (id ? (byId.get(id)?.name ?? id) : '—'),
    };
  }, [res.data]);
  if (!value) {
    if (res.error) return <>{failed(() => reexecute({ requestPolicy: 'network-only' }))}</>;
    return <>{loading}</>;
  }
  return <ViewerContext.Provider value={value}>{children}</ViewerContext.Provider>;
}

export function useViewer(): ViewerState {
  const v = useContext(ViewerContext);
  if (!v) throw new Error('useViewer outside ViewerProvider');
  return v;
}

/** useFormat formats money in yuan and times in the merchant's time zone for the current language. */
export function useFormat() {
  const { locale } = useI18n();
  const { timezone } = useViewer();
  return useMemo(
    () => ({
      money: formatFen,
      dateTime: (iso: string | null | undefined) => formatDateTime(iso, timezone, locale),
      dateTimeShort: (iso: string | null | undefined) => formatDateTime(iso, timezone, locale, false),
      timezone,
      locale,
    }),
    [locale, timezone],
  );
}
