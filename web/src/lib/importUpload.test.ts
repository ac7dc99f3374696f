import { describe, expect, it } from 'vitest';
import { NDJSONReader, uploadRequestId } from './importUpload';

describe('NDJSONReader', () => {
  it('returns each complete line once, however the text grows', () => {
    const r = new NDJSONReader();
    expect(r.next('{"offset":1,"lines":1,"imported":1,"rejected":0}\n{"off')).toHaveLength(1);
    expect(r.next('{"offset":1,"lines":1,"imported":1,"rejected":0}\n{"offset":2,"lines":2,"imported":2,"rejected":0}\n')).toEqual([
      { offset: 2, lines: 2, imported: 2, rejected: 0 },
    ]);
    expect(r.next('{"offset":1,"lines":1,"imported":1,"rejected":0}\n{"offset":2,"lines":2,"imported":2,"rejected":0}\n\n')).toEqual([]);
  });
});

describe('uploadRequestId', () => {
  it('is stable for one file and campaign, differs otherwise, and fits the server limit', () => {
    const f = { name: 'codes.csv', size: 31_000_000, lastModified: 1764720000000 };
    const id = uploadRequestId('12', f);
    expect(uploadRequestId('12', { ...f })).toBe(id);
    expect(uploadRequestId('13', f)).not.toBe(id);
    expect(uploadRequestId('12', { ...f, lastModified: 1 })).not.toBe(id);
    expect(id.length).toBeLessThanOrEqual(48);
    expect(id).toMatch(/^[A-Za-z0-9._:-]+$/);
  });
});
