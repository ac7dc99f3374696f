/**
 * downloadExport fetches one of the server's /export/ files with the bearer
 * token and saves it; it throws with the server's message on failure.
 */
export async function downloadExport(token: string, url: string, filename: string): Promise<void> {
  const resp = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
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
