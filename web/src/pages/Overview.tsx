import { useMemo } from 'react';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useQuery } from 'urql';
import { useI18n } from '../app/i18n';
import { useFormat, useViewer } from '../app/viewer';
import { Card, PageHeader } from '../components/Page';
import { Empty, ErrorState, Loading } from '../components/States';
import { graphql } from '../gql';
import { dayKey, formatAge, formatDuration, startOfDay, wallTime } from '../lib/dates';
import { Counts } from './Jobs';
import { StatusBadge } from '../components/Badge';
import { Link } from 'react-router';

const WeekByHourDocument = graphql(`
  query WeekByHour($from: Time!, $to: Time!) {
    redemptionsByHour(from: $from, to: $to) {
      hour
      redeemed
    }
  }
`);

const TodayDocument = graphql(`
  query Today($day: String!) {
    statements(from: $day, to: $day) {
      stores {
        store {
          id
        }
        redeemedCount
        redeemedAmount
        refundedCount
        refundedAmount
      }
      lapsed {
        expiredCount
        expiredValue
        voidedCount
      }
    }
  }
`);

const LiabilityDocument = graphql(`
  query Liability {
    liability {
      at
      unusedCount
      faceValue
      discountCouponsAt
      uncappedDiscountCount
    }
  }
`);

const InFlightDocument = graphql(`
  query InFlight {
    redemptions(filter: { status: PROCESSING }, first: 100) {
      edges {
        node {
          redeemNo
          createdAt
        }
      }
      pageInfo {
        hasNextPage
      }
    }
  }
`);

const OpenFindingsDocument = graphql(`
  query OpenFindings {
    findings(filter: { status: OPEN }, first: 100) {
      edges {
        node {
          id
        }
      }
      pageInfo {
        hasNextPage
      }
    }
  }
`);

const LastRunsDocument = graphql(`
  query LastRuns {
    jobRuns(first: 6) {
      edges {
        node {
          id
          job
          status
          error
          startedAt
          finishedAt
          counts {
            name
            value
          }
        }
      }
    }
  }
`);

export function OverviewPage() {
  const { t, tk, locale } = useI18n();
  const { merchantName, stores, role } = useViewer();
  const fmt = useFormat();
  // The week's chart is counted per hour by the database, however busy the week.
  const [weekStart, weekEnd] = useMemo(() => {
    const start = startOfDay(new Date(), fmt.timezone, -6);
    return [start.toISOString(), new Date(start.getTime() + 7 * 24 * 3600_000).toISOString()];
  }, [fmt.timezone]);
  const [week, rerunWeek] = useQuery({ query: WeekByHourDocument, variables: { from: weekStart, to: weekEnd }, requestPolicy: 'network-only' });
  const [inFlight] = useQuery({ query: InFlightDocument, requestPolicy: 'network-only' });
  const [findings] = useQuery({ query: OpenFindingsDocument, requestPolicy: 'network-only' });
  const [runs, rerunRuns] = useQuery({ query: LastRunsDocument, requestPolicy: 'network-only' });
  const seesLiability = role === 'ADMIN' || role === 'FINANCE';
  const [liability, rerunLiability] = useQuery({ query: LiabilityDocument, requestPolicy: 'network-only', pause: !seesLiability });

  // Today's numbers come from the server's statement of the merchant's day, so
  // they are exact however busy the day.
  const todayKey = dayKey(new Date(), fmt.timezone);
  const [todayRes, rerunToday] = useQuery({ query: TodayDocument, variables: { day: todayKey }, requestPolicy: 'network-only' });
  const today = useMemo(() => {
    const lines = todayRes.data?.statements.stores;
    if (!lines) return null;
    const perStore = new Map<string, { count: number; discount: number; refunds: number; refunded: number }>();
    for (const s of stores) perStore.set(s.id, { count: 0, discount: 0, refunds: 0, refunded: 0 });
    const total = { count: 0, discount: 0, refunds: 0, refunded: 0 };
    for (const l of lines) {
      const v = perStore.get(l.store.id) ?? { count: 0, discount: 0, refunds: 0, refunded: 0 };
      v.count += l.redeemedCount;
      v.discount += l.redeemedAmount;
      v.refunds += l.refundedCount;
      v.refunded += l.refundedAmount;
      perStore.set(l.store.id, v);
      total.count += l.redeemedCount;
      total.discount += l.redeemedAmount;
      total.refunds += l.refundedCount;
      total.refunded += l.refundedAmount;
    }
    const lapsed = { expired: 0, value: 0, voided: 0 };
    for (const l of todayRes.data?.statements.lapsed ?? []) {
      lapsed.expired += l.expiredCount;
      lapsed.value += l.expiredValue;
      lapsed.voided += l.voidedCount;
    }
    return { perStore, total, lapsed };
  }, [todayRes.data, stores]);
  const li = liability.data?.liability;

  const chart = useMemo(() => {
    const hours = week.data?.redemptionsByHour;
    if (!hours) return null;
    const start = new Date(weekStart).getTime();
    const counts = new Array<number>(7 * 24).fill(0);
    for (const r of hours) {
      const bucket = Math.floor((new Date(r.hour).getTime() - start) / 3600_000);
      if (bucket >= 0 && bucket < counts.length) counts[bucket] += r.redeemed;
    }
    return counts.map((count, h) => {
      const w = wallTime(new Date(start + h * 3600_000), fmt.timezone);
      return { h, label: `${w.month}/${w.day} ${String(w.hour).padStart(2, '0')}:00`, day: `${w.month}/${w.day}`, count };
    });
  }, [week.data, weekStart, fmt.timezone]);

  const openCount = findings.data?.findings.edges.length ?? 0;
  const flights = inFlight.data?.redemptions.edges ?? [];
  const oldest = flights.length ? flights[flights.length - 1].node.createdAt : null;

  return (
    <>
      <PageHeader title={t('overview.title')} subtitle={`${t('overview.subtitle', { merchant: merchantName })} · ${t('common.timezone', { tz: fmt.timezone })}`} />
      <div className="kpis" data-testid="kpis">
        <div className="kpi">
          <div className="kpi-label">{t('overview.redeemedToday')}</div>
          <div className="kpi-value">{today ? today.total.count.toLocaleString() : '—'}</div>
          <div className="kpi-sub">{today ? t('overview.gross', { amount: fmt.money(today.total.discount) }) : ''}</div>
        </div>
        <div className="kpi">
          <div className="kpi-label">{t('overview.discountToday')}</div>
          <div className="kpi-value">{today ? fmt.money(today.total.discount - today.total.refunded) : '—'}</div>
          <div className="kpi-sub">{t('overview.afterRefunds')}</div>
        </div>
        <div className="kpi">
          <div className="kpi-label">{t('overview.refundsToday')}</div>
          <div className="kpi-value">{today ? today.total.refunds.toLocaleString() : '—'}</div>
          <div className="kpi-sub">{today ? fmt.money(today.total.refunded) : ''}</div>
        </div>
        <div className="kpi" data-testid="kpi-expired">
          <div className="kpi-label">{t('overview.expiredToday')}</div>
          <div className="kpi-value">{today ? today.lapsed.expired.toLocaleString() : '—'}</div>
          <div className="kpi-sub">{today ? t('overview.expiredSub', { amount: fmt.money(today.lapsed.value), voided: today.lapsed.voided }) : ''}</div>
        </div>
        <div className={`kpi ${flights.length ? 'kpi-warning' : ''}`}>
          <div className="kpi-label">{t('overview.inFlight')}</div>
          <div className="kpi-value">
            {inFlight.data ? `${flights.length}${inFlight.data.redemptions.pageInfo.hasNextPage ? '+' : ''}` : '—'}
          </div>
          <div className="kpi-sub">
            {oldest ? t('overview.oldest', { age: formatAge(Date.now() - new Date(oldest).getTime(), locale) }) : inFlight.data ? t('overview.noneInFlight') : ''}
          </div>
        </div>
        <Link to="/reconciliation" className={`kpi kpi-link ${openCount ? 'kpi-danger' : ''}`} data-testid="kpi-findings">
          <div className="kpi-label">{t('overview.openFindings')}</div>
          <div className="kpi-value">{findings.data ? `${openCount}${findings.data.findings.pageInfo.hasNextPage ? '+' : ''}` : findings.error ? '!' : '—'}</div>
          <div className="kpi-sub">{t('recon.review')} →</div>
        </Link>
      </div>
      {seesLiability && (
        <Card
          title={t('overview.liability')}
          actions={li ? <span className="muted small">{t('overview.liabilityAt', { at: fmt.dateTime(li.at) })}</span> : undefined}
        >
          {liability.error && !li ? (
            <ErrorState error={liability.error} onRetry={() => rerunLiability({ requestPolicy: 'network-only' })} />
          ) : !li ? (
            <Loading />
          ) : (
            <div className="liability" data-testid="liability">
              <p className="muted small">{t('overview.liabilityHint')}</p>
              <div className="facts">
                <div className="fact">
                  <div className="fact-label">{t('overview.unusedCoupons')}</div>
                  <div className="fact-value kpi-value" data-testid="liability-unused">{li.unusedCount.toLocaleString()}</div>
                </div>
                <div className="fact">
                  <div className="fact-label">{t('overview.faceValue')}</div>
                  <div className="fact-value kpi-value" data-testid="liability-face">{fmt.money(li.faceValue)}</div>
                </div>
                <div className="fact">
                  <div className="fact-label">{t('overview.discountCoupons')}</div>
                  <div className="fact-value" data-testid="liability-discount">
                    {tk(`discountAt.${li.discountCouponsAt}`)}{' '}
                    {li.discountCouponsAt === 'CAP' && (
                      <span className={li.uncappedDiscountCount > 0 ? 'warning-text' : 'muted'}>
                        {li.uncappedDiscountCount > 0 ? t('overview.uncapped', { n: li.uncappedDiscountCount }) : t('overview.noUncapped')}
                      </span>
                    )}
                  </div>
                </div>
              </div>
            </div>
          )}
        </Card>
      )}
      <Card title={t('overview.chart')}>
        {week.error ? (
          <ErrorState error={week.error} onRetry={() => rerunWeek({ requestPolicy: 'network-only' })} />
        ) : !chart ? (
          <Loading />
        ) : week.data!.redemptionsByHour.length === 0 ? (
          <Empty />
        ) : (
          <div className="chart" data-testid="hourly-chart">
            <ResponsiveContainer width="100%" height={240}>
              <BarChart data={chart} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
                <CartesianGrid vertical={false} stroke="#e6e9ef" />
                <XAxis dataKey="h" tickFormatter={(h: number) => chart[h]?.day ?? ''} ticks={[0, 24, 48, 72, 96, 120, 144]} tick={{ fontSize: 12, fill: '#667085' }} axisLine={false} tickLine={false} />
                <YAxis allowDecimals={false} tick={{ fontSize: 12, fill: '#667085' }} axisLine={false} tickLine={false} />
                <Tooltip
                  cursor={{ fill: 'rgba(37,99,235,0.08)' }}
                  labelFormatter={(h) => chart[Number(h)]?.label ?? ''}
                  formatter={(v) => [`${v} ${t('overview.redemptions')}`, '']}
                  separator=""
                />
                <Bar dataKey="count" fill="#2563eb" radius={[2, 2, 0, 0]} isAnimationActive={false} />
              </BarChart>
            </ResponsiveContainer>
          </div>
        )}
      </Card>
      <Card title={t('overview.perStore')}>
        {todayRes.error && !today ? (
          <ErrorState error={todayRes.error} onRetry={() => rerunToday({ requestPolicy: 'network-only' })} />
        ) : !today ? (
          <Loading />
        ) : stores.length === 0 ? (
          <Empty />
        ) : (
          <div className="table-scroll">
            <table className="table" data-testid="per-store">
              <thead>
                <tr>
                  <th>{t('common.store')}</th>
                  <th className="num">{t('overview.redeemedCount')}</th>
                  <th className="num">{t('overview.discount')}</th>
                  <th className="num">{t('overview.refundedCount')}</th>
                  <th className="num">{t('overview.refundAmount')}</th>
                  <th className="num">{t('overview.net')}</th>
                </tr>
              </thead>
              <tbody>
                {stores.map((s) => {
                  const v = today.perStore.get(s.id)!;
                  return (
                    <tr key={s.id}>
                      <td>{s.name}</td>
                      <td className="num">{v.count}</td>
                      <td className="num">{fmt.money(v.discount)}</td>
                      <td className="num">{v.refunds}</td>
                      <td className="num">{fmt.money(v.refunded)}</td>
                      <td className="num strong">{fmt.money(v.discount - v.refunded)}</td>
                    </tr>
                  );
                })}
              </tbody>
              <tfoot>
                <tr>
                  <td>{t('overview.total')}</td>
                  <td className="num">{today.total.count}</td>
                  <td className="num">{fmt.money(today.total.discount)}</td>
                  <td className="num">{today.total.refunds}</td>
                  <td className="num">{fmt.money(today.total.refunded)}</td>
                  <td className="num">{fmt.money(today.total.discount - today.total.refunded)}</td>
                </tr>
              </tfoot>
            </table>
          </div>
        )}
      </Card>
      <Card
        title={t('overview.lastJobs')}
        actions={
          <Link to="/jobs" className="link small">
            {t('nav.jobs')} →
          </Link>
        }
      >
        {runs.error && !runs.data ? (
          <ErrorState error={runs.error} onRetry={() => rerunRuns({ requestPolicy: 'network-only' })} />
        ) : !runs.data ? (
          <Loading />
        ) : runs.data.jobRuns.edges.length === 0 ? (
          <Empty>{t('jobs.empty')}</Empty>
        ) : (
          <div className="table-scroll">
            <table className="table" data-testid="last-runs">
              <thead>
                <tr>
                  <th>{t('jobs.job')}</th>
                  <th>{t('common.status')}</th>
                  <th>{t('jobs.started')}</th>
                  <th className="num">{t('jobs.duration')}</th>
                  <th>{t('jobs.counts')}</th>
                </tr>
              </thead>
              <tbody>
                {runs.data.jobRuns.edges.map(({ node: r }) => (
                  <tr key={r.id}>
                    <td className="strong">{tk(`job.${r.job}`)}</td>
                    <td>
                      <StatusBadge status={r.status} />
                    </td>
                    <td className="nowrap">{fmt.dateTime(r.startedAt)}</td>
                    <td className="num">{formatDuration(r.startedAt, r.finishedAt)}</td>
                    <td>
                      <Counts counts={r.counts} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
