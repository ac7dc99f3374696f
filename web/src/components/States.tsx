import type { CombinedError } from 'urql';
import { useI18n } from '../app/i18n';
import { errorMessage, firstErrorCode, isNetworkError } from '../lib/errors';
import { hasMessage } from '../lib/i18n';

export function Loading({ label }: { label?: string }) {
  const { t } = useI18n();
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label ?? t('state.loading')}
    </div>
  );
}

export function Empty({ children }: { children?: React.ReactNode }) {
  const { t } = useI18n();
  return <div className="state state-empty">{children ?? t('state.empty')}</div>;
}

/** useErrorText puts an API error in words: by its code where known, else the server's message. */
export function useErrorText() {
  const { t, tk } = useI18n();
  return (error: CombinedError | undefined | null): string => {
    if (!error) return '';
    if (isNetworkError(error)) return t('error.network');
    const code = firstErrorCode(error);
    const msg = errorMessage(error);
    if (code && hasMessage(`error.${code}`)) return tk(`error.${code}`, { msg });
    return t('error.generic', { msg });
  };
}

export function ErrorState({ error, onRetry }: { error: CombinedError; onRetry?: () => void }) {
  const { t } = useI18n();
  const text = useErrorText();
  return (
    <div className="state state-error" role="alert">
      <strong>{t('state.error')}</strong> <span>{text(error)}</span>
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          {t('state.retry')}
        </button>
      )}
    </div>
  );
}

export type AlertKind = 'success' | 'error' | 'warning' | 'info';

export function Alert({ kind, title, children }: { kind: AlertKind; title?: React.ReactNode; children?: React.ReactNode }) {
  return (
    <div className={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {title && <div className="alert-title">{title}</div>}
      {children && <div className="alert-body">{children}</div>}
    </div>
  );
}
