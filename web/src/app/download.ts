import { saveBlob } from '../lib/csv';

/**
 * downloadExport fetches one of the server's /export/ files with the bearer
 * token and saves it. It answers 'missing' when this server has no such
 * endpoint (404 or the console's own HTML), so callers can fall back, and
 * throws with the server's message on any other failure.
 */
export async function downloadExport(token: string, url: string, filename: string): Promise<'saved' | 'missing'> {
  const resp = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  const type = resp.headers.get('Content-Type') ?? '';
  if (resp.status === 404 || type.includes('text/html')) return 'missing';
  if (!resp.ok) {
    let msg = `HTTP ${resp.status}`;
    try {
      const body = (await resp.json()) as { errors?: { message?: string }[]; message?: string };
      msg = body.errors?.[0]?.message ?? body.message ?? msg;
    } catch {
      // not JSON: keep the status
    }
    throw new Error(msg);
  }
  saveBlob(await resp.blob(), filename);
  return 'saved';
}
