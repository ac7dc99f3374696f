// The wire format of the upload of imported codes (POST /import/coupons.csv).

/** Rejection is one line of the file that was not imported. */
export interface Rejection {
  line: number;
  code: string;
  reason: 'DUPLICATE_IN_IMPORT' | 'ALREADY_EXISTS' | 'INVALID';
}

/** Progress is one line of the upload's streamed answer (see POST /import/coupons.csv). */
export interface Progress {
  batch?: number;
  firstLine?: number;
  lastLine?: number;
  offset: number;
  lines: number;
  imported: number;
  rejected: number;
  rejectedLines?: Rejection[];
  done?: boolean;
  error?: { code: string; message: string };
}

/** NDJSONReader splits a growing response text into the JSON objects of its complete lines. */
export class NDJSONReader {
  private used = 0;
  next(text: string): Progress[] {
    const out: Progress[] = [];
    for (;;) {
      const nl = text.indexOf('\n', this.used);
      if (nl < 0) return out;
      const line = text.slice(this.used, nl).trim();
      this.used = nl + 1;
      if (line) out.push(JSON.parse(line) as Progress);
    }
  }
}

/** uploadRequestId names an upload by campaign and file, so choosing the same file again resumes it. */
export function uploadRequestId(campaignId: string, file: { name: string; size: number; lastModified: number }): string {
  let h = 0x811c9dc5;
  for (const ch of `${file.name}|${file.size}|${file.lastModified}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `imp-${campaignId}-${file.size.toString(36)}-${h.toString(36)}`;
}
