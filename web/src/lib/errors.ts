import type { CombinedError } from 'urql';

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
