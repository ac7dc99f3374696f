import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectLocale, hasMessage, translate, type Locale, type Messages } from './i18n';
import { en } from './messages.en';
import { zh } from './messages.zh';

describe('detectLocale', () => {
  it.each([
    { give: ['zh-CN', 'en'], want: 'zh-CN' },
    { give: ['zh-TW'], want: 'zh-CN' },
    { give: ['zh'], want: 'zh-CN' },
    { give: ['en-US', 'zh-CN'], want: 'en' },
    { give: ['fr-FR', 'zh-CN'], want: 'zh-CN' },
    { give: ['fr-FR', 'de'], want: 'en' },
    { give: [], want: 'en' },
  ])('$give → $want', ({ give, want }) => {
    expect(detectLocale(give)).toBe(want);
  });

  it('prefers the stored choice of the switch', () => {
    expect(detectLocale(['zh-CN'], 'en')).toBe('en');
    expect(detectLocale(['en-US'], 'zh-CN')).toBe('zh-CN');
    expect(detectLocale(['en-US'], 'klingon')).toBe('en');
  });
});

describe('translate', () => {
  it('fills placeholders and leaves unknown ones visible', () => {
    expect(translate('en', 'pager.page', { n: 3 })).toBe('Page 3');
    expect(translate('zh-CN', 'pager.page', { n: 3 })).toBe('第 3 页');
    expect(translate('en', 'pager.page')).toBe('Page {n}');
  });

  it('falls back to English for a key the translation lacks, then to the key', () => {
    const catalogs: Record<Locale, Messages> = { en: { 'nav.jobs': 'Jobs' }, 'zh-CN': {} };
    expect(translate('zh-CN', 'nav.jobs', undefined, catalogs)).toBe('Jobs');
    expect(translate('zh-CN', 'no.such.key', undefined, catalogs)).toBe('no.such.key');
  });

  it('translates Chinese for real', () => {
    expect(translate('zh-CN', 'nav.overview')).toBe('概览');
  });
});

describe('catalogs', () => {
  // Keys whose English text is language-neutral.
  const neutral = new Set(['app.name', 'signIn.placeholder', 'redeem.amountPlaceholder']);

  it('Chinese covers every English message', () => {
    const missing = Object.keys(en).filter((k) => !(k in zh) && !neutral.has(k));
    expect(missing).toEqual([]);
  });

  it('Chinese has no message English lacks, and the same placeholders', () => {
    for (const [k, v] of Object.entries(zh)) {
      expect(hasMessage(k), k).toBe(true);
      const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(names(v!), k).toEqual(names(en[k as keyof typeof en]));
    }
  });

  it('has words for every value of the enums the console shows', () => {
    const dir = join(__dirname, '..', '..', '..', 'graph');
    const schema = readdirSync(dir)
      .filter((f) => f.endsWith('.graphqls'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    const values = (name: string): string[] => {
      const m = new RegExp(`enum ${name} \\{([^}]*)\\}`).exec(schema);
      if (!m) return [];
      return m[1]
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => /^[A-Z_]+$/.test(l));
    };
    const prefixes: Record<string, string> = {
      CouponStatus: 'status.',
      RedemptionStatus: 'status.',
      RejectReason: 'reject.',
      CampaignType: 'type.',
      Role: 'role.',
      FindingKind: 'kind.',
      FindingStatus: 'status.',
      JobRunStatus: 'status.',
      CampaignState: 'status.',
      FindingAction: 'findingAction.',
      StatementFigure: 'figure.',
      DiscountValuation: 'discountAt.',
      WebhookDeliveryStatus: 'status.',
    };
    for (const [e, prefix] of Object.entries(prefixes)) {
      for (const v of values(e)) expect(hasMessage(`${prefix}${v}`), `${e}.${v}`).toBe(true);
    }
    expect(values('CouponStatus')).toContain('REDEEMED');
    expect(values('CampaignState')).toContain('PAUSED');
    expect(values('RejectReason')).toContain('CAMPAIGN_PAUSED');
    expect(values('StatementFigure')).toContain('EXPIRED');
    expect(values('DiscountValuation')).toContain('CAP');
  });
});
