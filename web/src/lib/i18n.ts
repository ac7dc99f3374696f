// Messages in English and Simplified Chinese. English is complete and is the
// fallback for any key a translation lacks; a missing key shows itself.
import { en } from './messages.en';
import { zh } from './messages.zh';

export type Locale = 'en' | 'zh-CN';
export type MessageKey = keyof typeof en;
export type Messages = Partial<Record<MessageKey, string>>;

export const LOCALES: Locale[] = ['zh-CN', 'en'];

const catalogs: Record<Locale, Messages> = { en, 'zh-CN': zh };

/** detectLocale picks zh-CN for any Chinese browser language before an English one, else English. */
export function detectLocale(languages: readonly string[] | undefined, stored?: string | null): Locale {
  if (stored === 'en' || stored === 'zh-CN') return stored;
  for (const lang of languages ?? []) {
    const l = lang.toLowerCase();
    if (l.startsWith('zh')) return 'zh-CN';
    if (l.startsWith('en')) return 'en';
  }
  return 'en';
}

/** translate looks key up in locale, then in English, and fills {name} placeholders. */
export function translate(
  locale: Locale,
  key: MessageKey | string,
  params?: Record<string, string | number>,
  catalogsFor: Record<Locale, Messages> = catalogs,
): string {
  const k = key as MessageKey;
  const text = catalogsFor[locale]?.[k] ?? catalogsFor.en[k] ?? en[k] ?? String(key);
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

/** hasMessage tells whether any catalog knows key, for enum values the server may add later. */
export function hasMessage(key: string): key is MessageKey {
  return key in en;
}
