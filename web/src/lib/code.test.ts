import { describe, expect, it } from 'vitest';
import { formatCouponCode, lookupCode, normalizeCouponCode, searchKey, withCheckSymbol } from './code';

// Codes issued by a real coupond server (services.NewCouponCode).
const SERVER_CODES = ['228QJY6NEMKV2', 'Y2AC8MGKZGP6J'];

describe('normalizeCouponCode', () => {
  it.each(SERVER_CODES)('accepts server code %s however it is typed', (code) => {
    const typed = [code, code.toLowerCase(), formatCouponCode(code), `  ${formatCouponCode(code).toLowerCase()}  `, code.replace(/(.{4})/g, '$1 ')];
    for (const t of typed) expect(normalizeCouponCode(t)).toEqual({ ok: true, code });
  });

  it('decodes the Crockford aliases O, I and L', () => {
    const code = withCheckSymbol('0011ABCDEFGH');
    expect(normalizeCouponCode('OoIlABCDEFGH' + code[12])).toEqual({ ok: true, code });
  });

  it('catches every single-symbol typo', () => {
    const code = SERVER_CODES[0];
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    for (let i = 0; i < code.length; i++) {
      for (const c of alphabet) {
        if (c === code[i]) continue;
        const typo = code.slice(0, i) + c + code.slice(i + 1);
        expect(normalizeCouponCode(typo)).toEqual({ ok: false, problem: 'checkSymbol' });
      }
    }
  });

  it.each([
    { name: 'empty', give: '   ', want: 'empty' },
    { name: 'only dashes', give: '--', want: 'empty' },
    { name: 'symbol outside the alphabet', give: '228QJY6NEMKU2', want: 'badSymbol' },
    { name: 'non-ASCII', give: '228QJY6NEMKV２', want: 'badSymbol' },
    { name: 'too short', give: '228QJY6NEMKV', want: 'length' },
    { name: 'too long', give: '228QJY6NEMKV22', want: 'length' },
    { name: 'absurdly long', give: 'A'.repeat(65), want: 'tooLong' },
  ])('rejects $name', ({ give, want }) => {
    expect(normalizeCouponCode(give)).toEqual({ ok: false, problem: want });
  });
});

describe('searchKey', () => {
  it('trims, upper-cases and drops dashes and spaces like the API', () => {
    expect(searchKey('  ab-cd ef\tgh ')).toBe('ABCDEFGH');
  });
});

describe('formatCouponCode', () => {
  it('groups 13 symbols 4-4-4-1 and leaves anything else alone', () => {
    expect(formatCouponCode('228QJY6NEMKV2')).toBe('228Q-JY6N-EMKV-2');
    expect(formatCouponCode('ABC')).toBe('ABC');
  });
});

describe('lookupCode', () => {
  it('looks generated codes up as generated, and imported shapes as typed', () => {
    expect(lookupCode(formatCouponCode(SERVER_CODES[0]).toLowerCase())).toEqual({ ok: true, code: SERVER_CODES[0], generated: true });
    expect(lookupCode('vip-2026 olé')).toEqual({ ok: false, problem: 'badSymbol' });
    expect(lookupCode('vip-2026-0001')).toEqual({ ok: true, code: 'VIP20260001', generated: false });
    expect(lookupCode('HELLO-WORLD-0I')).toEqual({ ok: true, code: 'HELLOWORLD0I', generated: false });
    // A generated code with a typo has the imported shape: the server says whether it is one.
    const typo = SERVER_CODES[0].slice(0, 12) + (SERVER_CODES[0][12] === 'A' ? 'B' : 'A');
    expect(lookupCode(typo)).toEqual({ ok: true, code: typo, generated: false });
    expect(lookupCode('ABC12')).toEqual({ ok: false, problem: 'length' });
    expect(lookupCode('A'.repeat(33))).toEqual({ ok: false, problem: 'length' });
  });
});
