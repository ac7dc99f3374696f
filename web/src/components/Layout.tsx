import { NavLink, Outlet, useNavigate } from 'react-router';
import { useAuth } from '../app/auth';
import { useI18n } from '../app/i18n';
import { useViewer, type Role } from '../app/viewer';
import { LOCALES, type Locale, type MessageKey } from '../lib/i18n';

interface NavItem {
  to: string;
  label: MessageKey;
  icon: string;
  roles: Role[];
  section: MessageKey;
}

/** NAV lists the pages and which roles see them (the server enforces the same). */
export const NAV: NavItem[] = [
  { to: '/', label: 'nav.overview', icon: '◧', roles: ['ADMIN', 'FINANCE'], section: 'nav.section.operate' },
  { to: '/redeem', label: 'nav.redeem', icon: '⌁', roles: ['ADMIN', 'CLERK'], section: 'nav.section.operate' },
  { to: '/coupons', label: 'nav.coupons', icon: '▦', roles: ['ADMIN', 'FINANCE', 'CLERK'], section: 'nav.section.operate' },
  { to: '/campaigns', label: 'nav.campaigns', icon: '◫', roles: ['ADMIN', 'FINANCE'], section: 'nav.section.operate' },
  { to: '/redemptions', label: 'nav.redemptions', icon: '≣', roles: ['ADMIN', 'FINANCE', 'CLERK'], section: 'nav.section.finance' },
  { to: '/reconciliation', label: 'nav.reconciliation', icon: '⚖', roles: ['ADMIN', 'FINANCE'], section: 'nav.section.finance' },
  { to: '/jobs', label: 'nav.jobs', icon: '⟳', roles: ['ADMIN', 'FINANCE'], section: 'nav.section.system' },
  { to: '/audit', label: 'nav.audit', icon: '☰', roles: ['ADMIN', 'FINANCE'], section: 'nav.section.system' },
  { to: '/tokens', label: 'nav.tokens', icon: '◈', roles: ['ADMIN'], section: 'nav.section.system' },
  { to: '/webhooks', label: 'nav.webhooks', icon: '⇄', roles: ['ADMIN'], section: 'nav.section.system' },
];

export function homeFor(role: Role): string {
  return role === 'CLERK' ? '/redeem' : '/';
}

export function LanguageSwitch() {
  const { locale, setLocale, t } = useI18n();
  return (
    <div className="lang-switch" role="group" aria-label={t('nav.language')}>
      {LOCALES.map((l: Locale) => (
        <button
          key={l}
          type="button"
          className={l === locale ? 'active' : ''}
          aria-pressed={l === locale}
          data-locale={l}
          onClick={() => setLocale(l)}
        >
          {l === 'zh-CN' ? '中文' : 'EN'}
        </button>
      ))}
    </div>
  );
}

export function Layout() {
  const { t } = useI18n();
  const { role, merchantName, timezone } = useViewer();
  const { signOut } = useAuth();
  const navigate = useNavigate();
  const items = NAV.filter((n) => n.roles.includes(role));
  const sections = [...new Set(items.map((i) => i.section))];
  return (
    <div className={`shell role-${role.toLowerCase()}`}>
      <aside className="sidebar">
        <div className="brand">
          <span className="brand-mark">券</span>
          <div>
            <div className="brand-name">{t('app.name')}</div>
            <div className="brand-tagline">{t('app.tagline')}</div>
          </div>
        </div>
        <nav aria-label="main">
          {sections.map((s) => (
            <div key={s} className="nav-section">
              <div className="nav-section-title">{t(s)}</div>
              {items
                .filter((i) => i.section === s)
                .map((i) => (
                  <NavLink key={i.to} to={i.to} end={i.to === '/'} className="nav-link" data-nav={i.to}>
                    <span className="nav-icon" aria-hidden="true">
                      {i.icon}
                    </span>
                    {t(i.label)}
                  </NavLink>
                ))}
            </div>
          ))}
        </nav>
        <div className="sidebar-foot">
          <div className="merchant">
            <div className="merchant-name">{merchantName}</div>
            <div className="merchant-meta">
              <span className="role-pill">{t(`role.${role}`)}</span> · {timezone}
            </div>
          </div>
          <LanguageSwitch />
          <button
            type="button"
            className="btn btn-ghost signout"
            data-testid="sign-out"
            onClick={() => {
              navigate('/');
              signOut();
            }}
          >
            {t('nav.signOut')}
          </button>
        </div>
      </aside>
      <main className="content">
        <Outlet />
      </main>
    </div>
  );
}
