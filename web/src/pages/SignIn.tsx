import { useState } from 'react';
import { useAuth } from '../app/auth';
import { useI18n } from '../app/i18n';
import { LanguageSwitch } from '../components/Layout';
import { Alert } from '../components/States';

/** checkToken asks the API who a token is, before it is kept. */
async function checkToken(token: string): Promise<'ok' | 'rejected' | 'unreachable'> {
  try {
    const res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ viewer { role } }' }),
    });
    if (res.status === 401 || res.status === 403) return 'rejected';
    const body = (await res.json()) as { data?: { viewer?: unknown }; errors?: { extensions?: { code?: string } }[] };
    if (body.data?.viewer) return 'ok';
    return body.errors?.some((e) => e.extensions?.code === 'UNAUTHENTICATED') ? 'rejected' : 'unreachable';
  } catch {
    return 'unreachable';
  }
}

export function SignIn() {
  const { t } = useI18n();
  const { signIn } = useAuth();
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<'rejected' | 'unreachable' | 'empty' | null>(null);

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const tk = token.trim().replace(/^Bearer\s+/i, '');
    if (!tk) {
      setProblem('empty');
      return;
    }
    setBusy(true);
    setProblem(null);
    const outcome = await checkToken(tk);
    setBusy(false);
    if (outcome === 'ok') signIn(tk);
    else setProblem(outcome);
  }

  return (
    <div className="auth-screen">
      <form className="auth-card" onSubmit={submit} data-testid="sign-in">
        <div className="auth-top">
          <div className="brand">
            <span className="brand-mark">券</span>
            <div>
              <div className="brand-name">{t('app.name')}</div>
              <div className="brand-tagline">{t('app.tagline')}</div>
            </div>
          </div>
          <LanguageSwitch />
        </div>
        <h1>{t('signIn.title')}</h1>
        <p className="muted">{t('signIn.subtitle')}</p>
        <label className="field">
          <span className="field-label">{t('signIn.token')}</span>
          <input
            name="token"
            type="password"
            autoComplete="off"
            spellCheck={false}
            autoFocus
            placeholder={t('signIn.placeholder')}
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        </label>
        {problem && <Alert kind="error">{t(`signIn.${problem}`)}</Alert>}
        <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
          {busy ? t('signIn.checking') : t('signIn.submit')}
        </button>
      </form>
    </div>
  );
}

export function SessionEnded() {
  const { t } = useI18n();
  const { signOut } = useAuth();
  return (
    <div className="auth-screen">
      <div className="auth-card" data-testid="session-ended">
        <div className="auth-icon" aria-hidden="true">
          !
        </div>
        <h1>{t('expired.title')}</h1>
        <p className="muted">{t('expired.body')}</p>
        <button type="button" className="btn btn-primary btn-block" onClick={signOut}>
          {t('expired.action')}
        </button>
      </div>
    </div>
  );
}
