import { describe, expect, it } from 'vitest';
import { rulesSentence } from './rules';

describe('rulesSentence', () => {
  it('says the issue example in English', () => {
    expect(
      rulesSentence('en', {
        usesPerCoupon: 3,
        weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'],
        window: { from: '11:00', to: '14:00' },
        perCustomerDailyLimit: 1,
      }),
    ).toBe('3 uses, Mon-Fri 11:00-14:00, at most 1 per customer per day');
  });
  it('writes separate runs of days and a window alone', () => {
    expect(rulesSentence('en', { weekdays: ['SATURDAY', 'MONDAY', 'WEDNESDAY', 'THURSDAY'] })).toBe('Mon, Wed-Thu, Sat');
    expect(rulesSentence('en', { window: { from: '22:00', to: '02:00' } })).toBe('daily 22:00-02:00');
  });
  it('says nothing for a plain coupon, and speaks Chinese', () => {
    expect(rulesSentence('en', { usesPerCoupon: 1, weekdays: [] })).toBe('');
    expect(rulesSentence('zh-CN', { usesPerCoupon: 3, perStoreDailyLimit: 50 })).toBe('3 次，每店每天最多 50 次');
  });
});
