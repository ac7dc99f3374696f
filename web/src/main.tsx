import { lazy, StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { Provider } from 'urql';
import { AuthProvider, useAuth } from './app/auth';
import { I18nProvider, useI18n } from './app/i18n';
import { useViewer, ViewerProvider, type Role } from './app/viewer';
import { homeFor, Layout } from './components/Layout';
import { Loading } from './components/States';
import { CampaignsPage } from './pages/Campaigns';
import { CreateCampaignPage } from './pages/CreateCampaign';
import { ImportCodesPage } from './pages/ImportCodes';
import { CouponPage } from './pages/Coupon';
import { CouponsPage } from './pages/Coupons';
import { AuditPage } from './pages/Audit';
import { JobsPage } from './pages/Jobs';
import { RedeemPage } from './pages/Redeem';
import { RedemptionsPage } from './pages/Redemptions';
import { SessionEnded, SignIn } from './pages/SignIn';
import { TokensPage } from './pages/Tokens';
import { WebhooksPage } from './pages/Webhooks';
import './styles.css';

// The pages with charts load on demand, so the redeem screen on a store tablet
// does not wait for the charting library.
const OverviewPage = lazy(() => import('./pages/Overview').then((m) => ({ default: m.OverviewPage })));
const ReconciliationPage = lazy(() => import('./pages/Reconciliation').then((m) => ({ default: m.ReconciliationPage })));

function Allow({ roles, children }: { roles: Role[]; children: React.ReactNode }) {
  const { role } = useViewer();
  const { t } = useI18n();
  if (!roles.includes(role)) return <div className="state state-empty">{t('state.forbidden')}</div>;
  return <>{children}</>;
}

function Home() {
  const { role } = useViewer();
  return role === 'CLERK' ? <Navigate to={homeFor(role)} replace /> : <OverviewPage />;
}

function Console() {
  const { t } = useI18n();
  const all: Role[] = ['ADMIN', 'FINANCE', 'CLERK'];
  const office: Role[] = ['ADMIN', 'FINANCE'];
  return (
    <ViewerProvider
      loading={<Loading />}
      failed={(retry) => (
        <div className="auth-screen">
          <div className="auth-card">
            <ErrorStateless retry={retry} />
          </div>
        </div>
      )}
    >
      <Suspense fallback={<Loading />}>
      <Routes>
        <Route element={<Layout />}>
          <Route index element={<Home />} />
          <Route path="redeem" element={<Allow roles={['ADMIN', 'CLERK']}><RedeemPage /></Allow>} />
          <Route path="coupons" element={<Allow roles={all}><CouponsPage /></Allow>} />
          <Route path="coupons/:code" element={<Allow roles={all}><CouponPage /></Allow>} />
          <Route path="redemptions" element={<Allow roles={all}><RedemptionsPage /></Allow>} />
          <Route path="campaigns" element={<Allow roles={office}><CampaignsPage /></Allow>} />
          <Route path="campaigns/new" element={<Allow roles={['ADMIN']}><CreateCampaignPage /></Allow>} />
          <Route path="campaigns/:id/import" element={<Allow roles={['ADMIN']}><ImportCodesPage /></Allow>} />
          <Route path="reconciliation/*" element={<Allow roles={office}><ReconciliationPage /></Allow>} />
          <Route path="jobs" element={<Allow roles={office}><JobsPage /></Allow>} />
          <Route path="audit" element={<Allow roles={office}><AuditPage /></Allow>} />
          <Route path="tokens" element={<Allow roles={['ADMIN']}><TokensPage /></Allow>} />
          <Route path="webhooks" element={<Allow roles={['ADMIN']}><WebhooksPage /></Allow>} />
          <Route path="*" element={<div className="state state-empty">{t('state.notFound')}</div>} />
        </Route>
      </Routes>
      </Suspense>
    </ViewerProvider>
  );
}

function ErrorStateless({ retry }: { retry: () => void }) {
  const { t } = useI18n();
  return (
    <div className="state state-error" role="alert">
      <strong>{t('state.error')}</strong>
      <button type="button" className="btn btn-small" onClick={retry}>
        {t('state.retry')}
      </button>
    </div>
  );
}

function Root() {
  const { token, expired, client } = useAuth();
  if (!token || !client) return <SignIn />;
  if (expired) return <SessionEnded />;
  return (
    <Provider value={client}>
      <Console />
    </Provider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <I18nProvider>
      <AuthProvider>
        <BrowserRouter>
          <Root />
        </BrowserRouter>
      </AuthProvider>
    </I18nProvider>
  </StrictMode>,
);

