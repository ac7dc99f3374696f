import { useI18n } from '../app/i18n';
import { PageHeader } from '../components/Page';

/** JobsPage waits for the job runs API (coming soon). */
export function JobsPage() {
  const { t } = useI18n();
  return (
    <>
      <PageHeader title={t('jobs.title')} />
      <div className="coming-soon" data-testid="coming-soon">
        <div className="coming-soon-badge">{t('common.comingSoon')}</div>
        <p>{t('jobs.soon')}</p>
      </div>
    </>
  );
}
