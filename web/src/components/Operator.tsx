import { useI18n } from '../app/i18n';

export interface OperatorLike {
  id: string;
  name: string;
  role: string;
}

/** OperatorName shows who made a redemption or refund: the token's name and role, or the system. */
export function OperatorName({ operator }: { operator: OperatorLike | null | undefined }) {
  const { t, tk } = useI18n();
  if (!operator) return <span className="muted" data-testid="operator">{t('operator.system')}</span>;
  return (
    <span className="operator" data-testid="operator" title={`token:${operator.id}`}>
      {t('operator.label', { name: operator.name, role: tk(`role.${operator.role}`) })}
    </span>
  );
}
