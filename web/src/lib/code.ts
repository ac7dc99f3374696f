// Coupon codes as the API reads them (services/codes.go): 12 Crockford base32
// symbols and a Luhn mod 32 check symbol. Checking here lets the console say
// "mistyped" before a request is made; the server checks again.

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RANDOM_LEN = 12;
export const COUPON_CODE_LENGTH = RANDOM_LEN + 1;
const MAX_RAW = 64;

const value = (c: string): number => {
  if (c === 'O') return 0;
  if (c === 'I' || c === 'L') return 1;
  return CROCKFORD.indexOf(c);
};

/** searchKey is the API's normalisation minus validation: trimmed, upper case, no dashes or spaces. */
export function searchKey(raw: string): string {
  return raw.trim().toUpperCase().replace(/[-\s]/g, '');
}

export type CodeProblem = 'empty' | 'tooLong' | 'badSymbol' | 'length' | 'checkSymbol';

export type NormalizedCode = { ok: true; code: string } | { ok: false; problem: CodeProblem };

function luhnCheck(symbols: string): string {
  let factor = 2;
  let sum = 0;
  for (let i = symbols.length - 1; i >= 0; i--) {
    const addend = factor * value(symbols[i]);
    factor = 3 - factor;
    sum += Math.floor(addend / 32) + (addend % 32);
  }
  return CROCKFORD[(32 - (sum % 32)) % 32];
}

/**
 * normalizeCouponCode mirrors services.NormalizeCouponCode: it trims, upper-cases,
 * drops dashes and spaces, decodes Crockford's aliases (O→0, I/L→1) and checks
 * the length and the check symbol.
 */
export function normalizeCouponCode(raw: string): NormalizedCode {
  if (raw.length > MAX_RAW) return { ok: false, problem: 'tooLong' };
  const key = searchKey(raw);
  if (key === '') return { ok: false, problem: 'empty' };
  let code = '';
  for (const ch of key) {
    const v = value(ch);
    if (v < 0) return { ok: false, problem: 'badSymbol' };
    code += CROCKFORD[v];
  }
  if (code.length !== COUPON_CODE_LENGTH) return { ok: false, problem: 'length' };
  if (luhnCheck(code.slice(0, RANDOM_LEN)) !== code[RANDOM_LEN]) return { ok: false, problem: 'checkSymbol' };
  return { ok: true, code };
}

/** formatCouponCode groups a canonical code for people: XXXX-XXXX-XXXX-C. */
export function formatCouponCode(code: string): string {
  if (code.length !== COUPON_CODE_LENGTH) return code;
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8, 12)}-${code.slice(12)}`;
}

/** makeCouponCode builds a valid code from 12 symbols; tests use it. */
export function withCheckSymbol(twelve: string): string {
  return twelve + luhnCheck(twelve);
}

/** IMPORTED_CODE is the shape of a merchant's imported code once normalised (services.NormalizeImportedCode). */
const IMPORTED_CODE = /^[A-Z0-9]{6,32}$/;

export type LookupCode = { ok: true; code: string; generated: boolean } | { ok: false; problem: CodeProblem };

/**
 * lookupCode mirrors services.lookupCode: a well-formed generated code is looked
 * up as such; anything else of the imported shape (6 to 32 of A-Z 0-9, no check
 * symbol) is looked up as typed, and only the server can tell whether the
 * merchant imported it; the rest is refused here with the generated code's problem.
 */
export function lookupCode(raw: string): LookupCode {
  const g = normalizeCouponCode(raw);
  if (g.ok) return { ok: true, code: g.code, generated: true };
  const key = searchKey(raw);
  if (raw.length <= 2 * MAX_RAW && IMPORTED_CODE.test(key)) return { ok: true, code: key, generated: false };
  return g;
}
