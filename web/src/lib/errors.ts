import type { CombinedError } from 'urql';
import { hasMessage, translate, type Locale } from './i18n';

/** errorCodes returns the extensions.code of every GraphQL error. */
export function errorCodes(error: CombinedError | undefined | null): string[] {
  if (!error) return [];
  return error.graphQLErrors
    .map((e) => (e.extensions as { code?: unknown } | undefined)?.code)
    .filter((c): c is string => typeof c === 'string');
}

/** firstErrorCode is the code of the first GraphQL error, if any. */
export function firstErrorCode(error: CombinedError | undefined | null): string | undefined {
  return errorCodes(error)[0];
}

/** isNetworkError tells a failed transport (no answer) from an answer that is an error. */
export function isNetworkError(error: CombinedError | undefined | null): boolean {
  return !!error?.networkError && error.graphQLErrors.length === 0;
}

/** errorMessage is the server's message of the first error, or the network failure. */
export function errorMessage(error: CombinedError | undefined | null): string {
  if (!error) return '';
  if (error.graphQLErrors.length > 0) return error.graphQLErrors[0].message;
  return error.networkError?.message ?? error.message;
}

/**
 * isOverloaded tells whether the server refused the request before running it:
 * at its in-flight limit (HTTP 503 OVERLOADED) or because it could not reach its
 * database to check the token (HTTP 503 UNAVAILABLE). urql reads the JSON body
 * of a non-2xx answer, so the refusal arrives as a GraphQL error with its code,
 * not as a network error.
 */
export function isOverloaded(error: CombinedError | undefined | null): boolean {
  const codes = errorCodes(error);
  return codes.includes('OVERLOADED') || codes.includes('UNAVAILABLE');
}

/** errorText puts an API error in words of locale: by its code where a message exists, else the server's message. */
export function errorText(locale: Locale, error: CombinedError | undefined | null): string {
  if (!error) return '';
  if (isNetworkError(error)) return translate(locale, 'error.network');
  const code = firstErrorCode(error);
  const msg = errorMessage(error);
  if (code && hasMessage(`error.${code}`)) return translate(locale, `error.${code}`, { msg });
  return translate(locale, 'error.generic', { msg });
}

/**
 * conflictOf tells whether an error is an optimistic-locking CONFLICT and, when
 * the server said so, the version the row has now (extensions.currentVersion).
 */
export function conflictOf(error: CombinedError | undefined | null): { currentVersion: number | null } | null {
  if (!error) return null;
  const e = error.graphQLErrors.find((g) => (g.extensions as { code?: unknown } | undefined)?.code === 'CONFLICT');
  if (!e) return null;
  const v = (e.extensions as { currentVersion?: unknown }).currentVersion;
  return { currentVersion: typeof v === 'number' ? v : null };
}

/**
 * errorTextIn puts an error in words like errorText, with messages of a context
 * first: `${context}.${code}` (e.g. campaign.error.CONFLICT) when a catalog has it.
 */
export function errorTextIn(locale: Locale, context: string, error: CombinedError | undefined | null): string {
  if (!error) return '';
  const code = isNetworkError(error) ? undefined : firstErrorCode(error);
  if (code && hasMessage(`${context}.${code}`)) return translate(locale, `${context}.${code}`, { msg: errorMessage(error) });
  return errorText(locale, error);
}
