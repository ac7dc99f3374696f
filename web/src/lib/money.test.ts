import { describe, expect, it } from 'vitest';
import { fenToYuanInput, formatFen, parseYuanToFen } from './money';

describe('formatFen', () => {
  it.each([
    { give: 0, want: '¥0.00' },
    { give: 5, want: '¥0.05' },
    { give: 1000, want: '¥10.00' },
    { give: 123456, want: '¥1,234.56' },
    { give: 100000000, want: '¥1,000,000.00' },
    { give: -1550, want: '-¥15.50' },
    { give: 2147483647, want: '¥21,474,836.47' },
  ])('$give fen is $want', ({ give, want }) => {
    expect(formatFen(give)).toBe(want);
  });

  it('shows a dash for a missing amount', () => {
    expect(formatFen(null)).toBe('—');
    expect(formatFen(undefined)).toBe('—');
    expect(formatFen(Number.NaN)).toBe('—');
  });

  it('gives a plain number for inputs', () => {
    expect(fenToYuanInput(123456)).toBe('1234.56');
  });
});

describe('parseYuanToFen', () => {
  it.each([
    { give: '12', want: 1200 },
    { give: '12.5', want: 1250 },
    { give: '12.50', want: 1250 },
    { give: '0.1', want: 10 },
    { give: '0.29', want: 29 },
    { give: '19.99', want: 1999 },
    { give: '12.', want: 1200 },
    { give: ' ¥1,234.56 ', want: 123456 },
    { give: '￥8', want: 800 },
    { give: '１２．５', want: 1250 },
    { give: '0', want: 0 },
  ])('"$give" is $want fen', ({ give, want }) => {
    expect(parseYuanToFen(give)).toBe(want);
  });

  it.each(['', 'abc', '-5', '1.234', '1e3', '.5', '12.3.4', '99999999999'])('rejects "%s"', (give) => {
    expect(parseYuanToFen(give)).toBeNull();
  });

  it('never loses a fen to floating point', () => {
    for (let fen = 0; fen < 100000; fen += 7) {
      expect(parseYuanToFen(fenToYuanInput(fen))).toBe(fen);
    }
  });
});
