import { useI18n } from '../app/i18n';

const tone: Record<string, string> = {
  UNUSED: 'neutral',
  REDEEMING: 'warning',
  REDEEMED: 'success',
  REFUNDED: 'info',
  EXPIRED: 'muted',
  VOIDED: 'danger',
  ACTIVE: 'success',
  PAUSED: 'warning',
  ENDED: 'muted',
  PROCESSING: 'warning',
  SUCCEEDED: 'success',
  REJECTED: 'danger',
  RELEASED: 'muted',
  RUNNING: 'warning',
  FAILED: 'danger',
  OPEN: 'danger',
  RESOLVED: 'success',
};

/** StatusBadge shows a coupon, flow or campaign status in words and colour. */
export function StatusBadge({ status }: { status: string }) {
  const { tk } = useI18n();
  return <span className={`badge badge-${tone[status] ?? 'neutral'}`} data-status={status}>{tk(`status.${status}`)}</span>;
}
