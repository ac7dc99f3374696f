import { useI18n } from '../app/i18n';
import { formatFen } from '../lib/money';

interface CampaignBenefit {
  type: string;
  value: number;
  maxDiscount: number;
  minSpend: number;
}

/** useWorth says in words what a campaign's coupon is worth, e.g. "¥10.00 off on orders from ¥30.00". */
export function useWorth() {
  const { t } = useI18n();
  return (c: CampaignBenefit, withMinSpend = true): string => {
    let s: string;
    switch (c.type) {
      case 'CASH':
        s = t('worth.CASH', { value: formatFen(c.value) });
        break;
      case 'DISCOUNT':
        s = c.maxDiscount > 0 ? t('worth.DISCOUNT_CAP', { percent: c.value, cap: formatFen(c.maxDiscount) }) : t('worth.DISCOUNT', { percent: c.value });
        break;
      default:
        s = t('worth.EXCHANGE', { value: formatFen(c.value) });
    }
    if (withMinSpend && c.minSpend > 0) s += ` · ${t('worth.minSpend', { amount: formatFen(c.minSpend) })}`;
    return s;
  };
}
