// CSV for finance: RFC 4180 quoting, a byte-order mark so Excel reads UTF-8
// (Chinese store names), and cells that a spreadsheet would run as formulas
// neutralised with a leading apostrophe.

function cell(v: string | number | null | undefined): string {
  let s = v === null || v === undefined ? '' : String(v);
  if (/^[=+@\t\r]/.test(s) || /^-[^\d.]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** toCSV joins rows into CSV text with CRLF line ends. */
export function toCSV(rows: (string | number | null | undefined)[][]): string {
  return rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

/** csvBlob wraps CSV text for download, with a UTF-8 byte-order mark. */
export function csvBlob(text: string): Blob {
  return new Blob(['\ufeff', text], { type: 'text/csv;charset=utf-8' });
}

/** saveBlob offers a blob as a file download. */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
