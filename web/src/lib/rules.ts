// The rules of a campaign in one sentence, for the creation form's preview:
// "3 uses, Mon-Fri 11:00-14:00, at most 1 per customer per day".
import { translate, type Locale } from './i18n';

/** WEEKDAYS are the schema's weekdays, Monday first. */
export const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export type WeekdayName = (typeof WEEKDAYS)[number];

export interface Rules {
  usesPerCoupon?: number;
  weekdays?: WeekdayName[];
  window?: { from: string; to: string };
  perCustomerDailyLimit?: number;
  perStoreDailyLimit?: number;
  validDaysAfterIssue?: number;
}

/** weekdayRanges writes a set of weekdays as runs: Mon-Fri, Sat; empty or all seven is every day. */
function weekdayRanges(locale: Locale, days: WeekdayName[]): string | null {
  const idx = WEEKDAYS.map((d) => days.includes(d));
  if (idx.every((x) => !x) || idx.every((x) => x)) return null;
  const runs: string[] = [];
  for (let i = 0; i < 7; i++) {
    if (!idx[i]) continue;
    let j = i;
    while (j + 1 < 7 && idx[j + 1]) j++;
    const a = translate(locale, `weekday.short.${WEEKDAYS[i]}`);
    runs.push(j > i ? `${a}-${translate(locale, `weekday.short.${WEEKDAYS[j]}`)}` : a);
    i = j;
  }
  return runs.join(translate(locale, 'rules.listSep'));
}

/** rulesSentence is the preview of a campaign's use rules, or '' when it has none beyond one use. */
export function rulesSentence(locale: Locale, r: Rules): string {
  const parts: string[] = [];
  if (r.usesPerCoupon && r.usesPerCoupon > 1) parts.push(translate(locale, 'rules.uses', { n: r.usesPerCoupon }));
  const days = weekdayRanges(locale, r.weekdays ?? []);
  const hours = r.window ? `${r.window.from}-${r.window.to}` : null;
  if (days && hours) parts.push(`${days} ${hours}`);
  else if (days) parts.push(days);
  else if (hours) parts.push(translate(locale, 'rules.daily', { hours }));
  if (r.perCustomerDailyLimit) parts.push(translate(locale, 'rules.perCustomerDay', { n: r.perCustomerDailyLimit }));
  if (r.perStoreDailyLimit) parts.push(translate(locale, 'rules.perStoreDay', { n: r.perStoreDailyLimit }));
  if (r.validDaysAfterIssue) parts.push(translate(locale, 'rules.validDays', { n: r.validDaysAfterIssue }));
  return parts.join(translate(locale, 'rules.sep'));
}
