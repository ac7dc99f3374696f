import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CombinedError } from 'urql';
import { makeClient } from '../app/auth';
import { conflictOf, errorCodes, errorText, errorTextIn, firstErrorCode, isNetworkError, isOverloaded } from './errors';

// What coupond answers past its in-flight limit, before it reads the body.
const overloadedBody = {
  errors: [
    {
      message: 'the server is serving its limit of 1024 requests at once; nothing was done, retry in a second',
      extensions: { code: 'OVERLOADED', retryAfter: 1 },
    },
  ],
};

/** answer sends one query through the console's own client, with fetch answering as respond does. */
async function answer(respond: () => Promise<Response>): Promise<CombinedError | undefined> {
  vi.stubGlobal('fetch', vi.fn(respond));
  const client = makeClient('cpd_test', () => {});
  const res = await client.query('query ViewerRole { viewer { role } }', {}, { requestPolicy: 'network-only' }).toPromise();
  return res.error;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  Promise.resolve(new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } }));

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('errors of the urql client', () => {
  it('surfaces the GraphQL body of a 503 OVERLOADED, not a network error', async () => {
    const error = await answer(() => json(503, overloadedBody, { 'Retry-After': '1' }));
    expect(error).toBeDefined();
    expect(isNetworkError(error)).toBe(false);
    expect(isOverloaded(error)).toBe(true);
    expect(firstErrorCode(error)).toBe('OVERLOADED');
    expect(error!.graphQLErrors[0].extensions).toMatchObject({ code: 'OVERLOADED', retryAfter: 1 });
    expect((error!.response as Response).status).toBe(503);
  });

  it('takes a 503 UNAVAILABLE (the token could not be checked) for a refusal before anything ran', async () => {
    const body = { errors: [{ message: 'the service cannot check credentials right now', extensions: { code: 'UNAVAILABLE' } }] };
    const error = await answer(() => json(503, body, { 'Retry-After': '1' }));
    expect(isNetworkError(error)).toBe(false);
    expect(isOverloaded(error)).toBe(true);
    expect(firstErrorCode(error)).toBe('UNAVAILABLE');
    expect(errorText('en', error)).toBe('The server could not reach its database and did nothing with this request. Try again in a moment.');
    expect(errorText('zh-CN', error)).toBe('服务器暂时无法连接数据库，未处理此请求。请稍候再试。');
  });

  it('takes a failed fetch for a network error', async () => {
    const error = await answer(() => Promise.reject(new TypeError('Failed to fetch')));
    expect(isNetworkError(error)).toBe(true);
    expect(isOverloaded(error)).toBe(false);
    expect(errorCodes(error)).toEqual([]);
  });

  it('takes a 503 without a GraphQL body (a proxy page) for a network error', async () => {
    const error = await answer(() =>
      Promise.resolve(new Response('<html>busy</html>', { status: 503, statusText: 'Service Unavailable', headers: { 'Content-Type': 'text/html' } })),
    );
    expect(isNetworkError(error)).toBe(true);
    expect(isOverloaded(error)).toBe(false);
  });

  it('does not take other codes for OVERLOADED', async () => {
    const error = await answer(() => json(200, { errors: [{ message: 'too many requests; retry later', extensions: { code: 'RATE_LIMITED', retryAfter: 3 } }] }));
    expect(isOverloaded(error)).toBe(false);
    expect(firstErrorCode(error)).toBe('RATE_LIMITED');
  });
});

describe('errorText', () => {
  it.each([
    { locale: 'en' as const, want: 'The server is busy and did nothing with this request. Try again in a moment.' },
    { locale: 'zh-CN' as const, want: '服务器繁忙，未处理此请求。请稍候再试。' },
  ])('puts OVERLOADED in words in $locale', async ({ locale, want }) => {
    const error = await answer(() => json(503, overloadedBody, { 'Retry-After': '1' }));
    expect(errorText(locale, error)).toBe(want);
  });

  it.each([
    { locale: 'en' as const, want: 'Too many requests. Wait a moment and try again.' },
    { locale: 'zh-CN' as const, want: '请求过于频繁，请稍候再试。' },
  ])('puts RATE_LIMITED in words in $locale', async ({ locale, want }) => {
    const error = await answer(() => json(200, { errors: [{ message: 'too many requests; retry later', extensions: { code: 'RATE_LIMITED', retryAfter: 3 } }] }));
    expect(errorText(locale, error)).toBe(want);
  });

  it('says a network error is one, and shows the server message of an unknown code', async () => {
    expect(errorText('en', await answer(() => Promise.reject(new TypeError('Failed to fetch'))))).toBe('No answer from the server (network error).');
    const unknown = await answer(() => json(200, { errors: [{ message: 'something new', extensions: { code: 'SOMETHING_NEW' } }] }));
    expect(errorText('en', unknown)).toBe('Failed: something new');
    expect(errorText('en', undefined)).toBe('');
  });
});

describe('campaign errors', () => {
  const conflictBody = {
    errors: [{ message: 'campaign 7 is at version 4, not 3', path: ['updateCampaign'], extensions: { code: 'CONFLICT', currentVersion: 4 } }],
    data: null,
  };

  it('reads a CONFLICT and the version the campaign is at now', async () => {
    const error = await answer(() => json(200, conflictBody));
    expect(conflictOf(error)).toEqual({ currentVersion: 4 });
  });

  it('takes a CONFLICT without currentVersion for a conflict of unknown version', async () => {
    const error = await answer(() => json(200, { errors: [{ message: 'changed', extensions: { code: 'CONFLICT' } }] }));
    expect(conflictOf(error)).toEqual({ currentVersion: null });
  });

  it('does not take other errors, or none, for a conflict', async () => {
    expect(conflictOf(await answer(() => json(200, { errors: [{ message: 'no', extensions: { code: 'INVALID_STATE' } }] })))).toBeNull();
    expect(conflictOf(await answer(() => Promise.reject(new TypeError('Failed to fetch'))))).toBeNull();
    expect(conflictOf(undefined)).toBeNull();
  });

  it.each([
    { locale: 'en' as const, want: 'Someone else changed this at the same time; reload and try again.' },
    { locale: 'zh-CN' as const, want: '他人同时修改了此数据，请刷新后重试。' },
  ])('puts CONFLICT in words in $locale', async ({ locale, want }) => {
    expect(errorText(locale, await answer(() => json(200, conflictBody)))).toBe(want);
  });

  it('prefers the words of a context, with the server message', async () => {
    const invalid = await answer(() => json(200, { errors: [{ message: 'campaign 7 is ENDED', extensions: { code: 'INVALID_STATE' } }] }));
    expect(errorTextIn('en', 'campaign.error', invalid)).toBe(
      "Not possible in the campaign's current state (it may have been paused, resumed or ended meanwhile): campaign 7 is ENDED",
    );
    expect(errorTextIn('zh-CN', 'campaign.error', invalid)).toBe('批次当前状态不允许此操作（可能刚被暂停、恢复或结束）：campaign 7 is ENDED');
    const bad = await answer(() => json(200, { errors: [{ message: 'totalQuantity 5 is below the 20 issued', extensions: { code: 'BAD_USER_INPUT' } }] }));
    expect(errorTextIn('en', 'campaign.error', bad)).toBe('The campaign was not changed: totalQuantity 5 is below the 20 issued');
  });

  it('says in words why a day cannot be closed yet', async () => {
    const notOver = await answer(() =>
      json(200, { errors: [{ message: "only a day that is over in the merchant's time zone can be closed", extensions: { code: 'BAD_USER_INPUT' } }] }),
    );
    expect(errorTextIn('en', 'recon.close.error', notOver)).toBe("only a day that is over in the merchant's time zone can be closed; today and later days stay open.");
    expect(errorTextIn('zh-CN', 'recon.close.error', notOver)).toBe('只能为商户时区内已经结束的日子关账，今天及以后的日子不能关账。');
  });

  it('falls back to the general words outside the context', async () => {
    expect(errorTextIn('en', 'campaign.error', await answer(() => json(200, { errors: [{ message: 'x', extensions: { code: 'FORBIDDEN' } }] })))).toBe(
      'Your role may not do this.',
    );
    expect(errorTextIn('en', 'campaign.error', await answer(() => Promise.reject(new TypeError('Failed to fetch'))))).toBe(
      'No answer from the server (network error).',
    );
    expect(errorTextIn('en', 'campaign.error', undefined)).toBe('');
  });
});
