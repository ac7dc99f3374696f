// Money crosses the API as integer fen; people read and type yuan. All
// arithmetic stays in integers so 0.1 + 0.2 never shows up on a receipt.

/** formatFen shows fen as yuan with two decimals and grouping: 123456 → "¥1,234.56". */
export function formatFen(fen: number | null | undefined): string {
  if (fen === null || fen === undefined || !Number.isFinite(fen)) return '—';
  const n = Math.trunc(fen);
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  const yuan = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const cents = (abs % 100).toString().padStart(2, '0');
  return `${sign}¥${yuan}.${cents}`;
}

/** fenToYuanInput shows fen as a plain yuan number for an input field: 1250 → "12.50". */
export function fenToYuanInput(fen: number): string {
  return formatFen(fen).replace(/[¥,]/g, '');
}

/**
 * parseYuanToFen reads an amount in yuan as typed ("12", "12.5", "¥1,234.56",
 * "１２．５") and returns integer fen, or null when it is not a non-negative
 * amount with at most two decimals.
 */
export function parseYuanToFen(input: string): number | null {
  const s = input
    .normalize('NFKC')
    .trim()
    .replace(/^[¥￥]/, '')
    .replace(/,/g, '')
    .trim();
  const m = /^(\d+)(?:\.(\d{0,2}))?$/.exec(s);
  if (!m) return null;
  const fen = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(fen) && fen <= 2_147_483_647 ? fen : null;
}
