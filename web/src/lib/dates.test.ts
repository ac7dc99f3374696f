import { describe, expect, it } from 'vitest';
import { dayKey, formatDateTime, formatMinutes, localInputToUtc, startOfDay, utcToLocalInput, zonedToUtc } from './dates';

describe('merchant time zone', () => {
  it('shows a UTC time in the merchant zone, not the browser zone', () => {
    expect(formatDateTime('2026-12-02T16:30:05Z', 'Asia/Shanghai')).toBe('2026-12-03 00:30:05');
    expect(formatDateTime('2026-12-02T16:30:05Z', 'America/New_York', 'en', false)).toBe('2026-12-02 11:30');
    expect(formatDateTime(null, 'Asia/Shanghai')).toBe('—');
  });

  it('finds the start of the merchant day', () => {
    const at = new Date('2026-12-02T17:00:00Z'); // 01:00 on Dec 3 in Shanghai
    expect(startOfDay(at, 'Asia/Shanghai').toISOString()).toBe('2026-12-02T16:00:00.000Z');
    expect(startOfDay(at, 'Asia/Shanghai', -6).toISOString()).toBe('2026-11-26T16:00:00.000Z');
    expect(dayKey(at, 'Asia/Shanghai')).toBe('2026-12-03');
    expect(dayKey(at, 'UTC')).toBe('2026-12-02');
  });

  it('reads datetime-local inputs as merchant time, across daylight saving', () => {
    expect(localInputToUtc('2026-12-02T08:00', 'Asia/Shanghai')?.toISOString()).toBe('2026-12-02T00:00:00.000Z');
    expect(localInputToUtc('2026-07-01T08:00', 'Europe/Berlin')?.toISOString()).toBe('2026-07-01T06:00:00.000Z');
    expect(localInputToUtc('2026-01-01T08:00', 'Europe/Berlin')?.toISOString()).toBe('2026-01-01T07:00:00.000Z');
    expect(localInputToUtc('nonsense', 'UTC')).toBeNull();
    const d = zonedToUtc({ year: 2026, month: 3, day: 29, hour: 12, minute: 0 }, 'Europe/Berlin');
    expect(utcToLocalInput(d, 'Europe/Berlin')).toBe('2026-03-29T12:00');
  });

  it('shows windows in whole units', () => {
    expect(formatMinutes(1440, 'en')).toBe('1 d');
    expect(formatMinutes(120, 'zh-CN')).toBe('2 小时');
    expect(formatMinutes(45, 'en')).toBe('45 min');
  });
});
