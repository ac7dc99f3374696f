import { useI18n } from '../app/i18n';
import { PageHeader } from '../components/Page';

/** ReconciliationPage waits for the findings and statements API (coming soon). */
export function ReconciliationPage() {
  const { t } = useI18n();
  return (
    <>
      <PageHeader title={t('recon.title')} />
      <div className="coming-soon" data-testid="coming-soon">
        <div className="coming-soon-badge">{t('common.comingSoon')}</div>
        <p>{t('recon.soon')}</p>
      </div>
    </>
  );
}
