import type { CombinedError } from 'urql';
import { useI18n } from '../app/i18n';
import { errorText } from '../lib/errors';

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

/** useErrorText puts an API error in words of the chosen language (see errorText). */
export function useErrorText() {
  const { locale } = useI18n();
  return (error: CombinedError | undefined | null): string => errorText(locale, error);
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
