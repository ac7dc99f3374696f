import { describe, expect, it } from 'vitest';
import { toCSV } from './csv';

describe('toCSV', () => {
  it('quotes what needs quoting and ends lines with CRLF', () => {
    expect(toCSV([['a', 'b,c', 'say "hi"', 'two\nlines', 12, null]])).toBe('a,"b,c","say ""hi""","two\nlines",12,\r\n');
  });

  it('keeps spreadsheet formulas from running', () => {
    expect(toCSV([['=1+1', '+86', '@SUM', '-x', '-12.5']])).toBe("'=1+1,'+86,'@SUM,'-x,-12.5\r\n");
  });
});
