// Dates shown and entered in the merchant's time zone, whatever the browser's.

const partsFormatters = new Map<string, Intl.DateTimeFormat>();

function partsIn(tz: string): Intl.DateTimeFormat {
  let f = partsFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    partsFormatters.set(tz, f);
  }
  return f;
}

/** WallTime is a calendar date and clock time in some time zone. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** wallTime returns the date and clock time of an instant in tz. */
export function wallTime(instant: Date, tz: string): WallTime {
  const out: Record<string, number> = {};
  for (const p of partsIn(tz).formatToParts(instant)) {
    if (p.type !== 'literal') out[p.type] = Number(p.value);
  }
  return {
    year: out.year,
    month: out.month,
    day: out.day,
    hour: out.hour === 24 ? 0 : out.hour,
    minute: out.minute,
    second: out.second,
  };
}

/** zonedToUtc returns the instant at which the clocks of tz show w. */
export function zonedToUtc(w: Omit<WallTime, 'second'> & { second?: number }, tz: string): Date {
  const target = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second ?? 0);
  let guess = target;
  // Two rounds settle every zone, daylight saving included.
  for (let i = 0; i < 2; i++) {
    const seen = wallTime(new Date(guess), tz);
    const seenMs = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, seen.minute, seen.second);
    guess += target - seenMs;
  }
  return new Date(guess);
}

/** startOfDay returns the instant the merchant's day containing instant began, shifted by addDays. */
export function startOfDay(instant: Date, tz: string, addDays = 0): Date {
  const w = wallTime(instant, tz);
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + addDays));
  return zonedToUtc({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 0, minute: 0 }, tz);
}

/** dayKey is "YYYY-MM-DD" of an instant in tz. */
export function dayKey(instant: Date, tz: string): string {
  const w = wallTime(instant, tz);
  return `${w.year}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

/** localInputToUtc reads an <input type="datetime-local"> value as merchant time. */
export function localInputToUtc(value: string, tz: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  if (!m) return null;
  return zonedToUtc({ year: +m[1], month: +m[2], day: +m[3], hour: +m[4], minute: +m[5] }, tz);
}

/** utcToLocalInput shows an instant as a datetime-local value in merchant time. */
export function utcToLocalInput(instant: Date, tz: string): string {
  const w = wallTime(instant, tz);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${w.year}-${p(w.month)}-${p(w.day)}T${p(w.hour)}:${p(w.minute)}`;
}

/**
 * formatDateTime shows an RFC 3339 time in tz as "2026-12-02 14:05:09": the
 * same unambiguous order in both languages, which finance staff compare
 * against statements and exports.
 */
export function formatDateTime(iso: string | null | undefined, tz: string, _locale?: string, withSeconds = true): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const w = wallTime(d, tz);
  const p = (n: number) => String(n).padStart(2, '0');
  const time = `${p(w.hour)}:${p(w.minute)}${withSeconds ? `:${p(w.second)}` : ''}`;
  return `${w.year}-${p(w.month)}-${p(w.day)} ${time}`;
}

/** formatMinutes shows a window of minutes in the largest whole unit: 1440 → "1 d". */
export function formatMinutes(min: number, locale: string): string {
  const zh = locale.startsWith('zh');
  if (min > 0 && min % 1440 === 0) return zh ? `${min / 1440} 天` : `${min / 1440} d`;
  if (min > 0 && min % 60 === 0) return zh ? `${min / 60} 小时` : `${min / 60} h`;
  return zh ? `${min} 分钟` : `${min} min`;
}

/** formatAge shows a duration in minutes/hours/days, short. */
export function formatAge(ms: number, locale: string): string {
  const min = Math.max(0, Math.round(ms / 60000));
  const zh = locale.startsWith('zh');
  if (min < 60) return zh ? `${min} 分钟` : `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return zh ? `${h} 小时 ${min % 60} 分` : `${h} h ${min % 60} min`;
  const d = Math.floor(h / 24);
  return zh ? `${d} 天` : `${d} days`;
}

/** formatDuration shows milliseconds between two times, e.g. "1.2 s". */
export function formatDuration(fromIso: string, toIso: string | null | undefined): string {
  if (!toIso) return '—';
  const ms = new Date(toIso).getTime() - new Date(fromIso).getTime();
  if (!Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}
