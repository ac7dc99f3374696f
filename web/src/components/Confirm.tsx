import { useState, type ReactNode } from 'react';
import { useI18n } from '../app/i18n';

/**
 * ConfirmButton asks before an action that cannot be undone: the first click
 * shows the question with a confirm and a cancel button, in the page (no
 * browser dialog, so it is in the console's language).
 */
export function ConfirmButton(props: {
  label: ReactNode;
  question: ReactNode;
  confirmLabel: ReactNode;
  onConfirm: () => void;
  disabled?: boolean;
  danger?: boolean;
  testId?: string;
  small?: boolean;
}) {
  const { t } = useI18n();
  const [asking, setAsking] = useState(false);
  const size = props.small ? 'btn-small' : '';
  if (!asking) {
    return (
      <button type="button" className={`btn ${size} ${props.danger ? 'btn-danger' : ''}`} disabled={props.disabled} data-testid={props.testId} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <div className="confirm" role="alertdialog" data-testid={props.testId ? `${props.testId}-confirm` : undefined}>
      <span className="confirm-question">{props.question}</span>
      <span className="confirm-buttons">
        <button
          type="button"
          className={`btn ${size} ${props.danger ? 'btn-danger-solid' : 'btn-primary'}`}
          data-testid="confirm-yes"
          disabled={props.disabled}
          onClick={() => {
            setAsking(false);
            props.onConfirm();
          }}
        >
          {props.confirmLabel}
        </button>
        <button type="button" className={`btn ${size} btn-ghost`} data-testid="confirm-no" onClick={() => setAsking(false)}>
          {t('common.cancel')}
        </button>
      </span>
    </div>
  );
}
