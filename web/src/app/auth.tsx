import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { Client, cacheExchange, fetchExchange, mapExchange } from 'urql';
import { errorCodes } from '../lib/errors';

// The API token lives in sessionStorage: it survives reloads of the tab and is
// gone when the tab closes. Nothing else of the session is stored.
const TOKEN_KEY = 'coupond.token';

interface AuthState {
  token: string | null;
  /** expired is set when the server answers UNAUTHENTICATED to a signed-in session. */
  expired: boolean;
  signIn(token: string): void;
  signOut(): void;
  client: Client | null;
}

const AuthContext = createContext<AuthState | null>(null);

function readToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** makeClient builds the urql client of one token; any UNAUTHENTICATED answer ends the session. */
export function makeClient(token: string, onUnauthenticated: () => void): Client {
  return new Client({
    url: '/graphql',
    preferGetMethod: false,
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers: { Authorization: `Bearer ${token}` } }),
    exchanges: [
      mapExchange({
        onError(error) {
          if (errorCodes(error).includes('UNAUTHENTICATED') || (error.response as Response | undefined)?.status === 401) {
            onUnauthenticated();
          }
        },
      }),
      cacheExchange,
      fetchExchange,
    ],
  });
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState<string | null>(readToken);
  const [expired, setExpired] = useState(false);
  const signIn = useCallback((t: string) => {
    sessionStorage.setItem(TOKEN_KEY, t);
    setExpired(false);
    setToken(t);
  }, []);
  const signOut = useCallback(() => {
    sessionStorage.removeItem(TOKEN_KEY);
    setExpired(false);
    setToken(null);
  }, []);
  const client = useMemo(() => (token ? makeClient(token, () => setExpired(true)) : null), [token]);
  const value = useMemo(() => ({ token, expired, signIn, signOut, client }), [token, expired, signIn, signOut, client]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const a = useContext(AuthContext);
  if (!a) throw new Error('useAuth outside AuthProvider');
  return a;
}

