import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { detectLocale, hasMessage, translate, type Locale, type MessageKey } from '../lib/i18n';

const LOCALE_KEY = 'coupond.locale';

interface I18n {
  locale: Locale;
  setLocale(l: Locale): void;
  t(key: MessageKey, params?: Record<string, string | number>): string;
  /** tk translates a key built at run time (an enum value), falling back to the raw value. */
  tk(key: string, params?: Record<string, string | number>): string;
}

const I18nContext = createContext<I18n | null>(null);

function storedLocale(): string | null {
  try {
    return localStorage.getItem(LOCALE_KEY);
  } catch {
    return null;
  }
}

export function I18nProvider({ children }: { children: ReactNode }) {
  const [locale, setLocaleState] = useState<Locale>(() => detectLocale(navigator.languages, storedLocale()));
  const setLocale = useCallback((l: Locale) => {
    try {
      localStorage.setItem(LOCALE_KEY, l);
    } catch {
      // private mode: the choice lasts for this page only
    }
    setLocaleState(l);
  }, []);
  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  const value = useMemo<I18n>(
    () => ({
      locale,
      setLocale,
      t: (key, params) => translate(locale, key, params),
      tk: (key, params) => (hasMessage(key) ? translate(locale, key, params) : key.slice(key.indexOf('.') + 1)),
    }),
    [locale, setLocale],
  );
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const v = useContext(I18nContext);
  if (!v) throw new Error('useI18n outside I18nProvider');
  return v;
}
