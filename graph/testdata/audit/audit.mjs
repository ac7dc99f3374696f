// Runs graphql-http's GraphQL-over-HTTP server audits against coupond.
//
// It builds coupond from this checkout, serves it on a free loopback port over
// a fresh SQLite file with --demo (for a token) and --playground (the audits
// ask __type, so introspection must be on), sends every audit with the demo
// ADMIN token, prints each result and exits 1 if any MUST or SHOULD audit
// fails. MAY audits that fail are printed but do not fail the run.
//
//   cd graph/testdata/audit && npm ci && node audit.mjs
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverAudits } from 'graphql-http';

const repo = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'coupond-audit-'));
const deadline = (ms, what) =>
  new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref());

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

// serve starts coupond and resolves with the process and the ADMIN token once
// /readyz answers.
async function serve(bin, port) {
  const args = ['serve', '--demo', '--playground', '--jobs=false', '--log-level', 'warn',
    '--database-url', join(dir, 'audit.db'), '--addr', `127.0.0.1:${port}`];
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (b) => { out += b; });
  const exited = new Promise((_, reject) => proc.once('exit', (code) => reject(new Error(`coupond exited with ${code}:\n${out}`))));
  const ready = (async () => {
    for (;;) {
      const token = /^ADMIN token:\s+(\S+)/m.exec(out)?.[1];
      if (token) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`);
          if (res.ok) return token;
        } catch { /* not listening yet */ }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const token = await Promise.race([ready, exited, deadline(60_000, 'coupond serve')]);
  return { proc, token };
}

function stop(proc) {
  if (!proc || proc.exitCode !== null) return Promise.resolve();
  return new Promise((r) => {
    proc.once('exit', r);
    proc.kill('SIGTERM');
  });
}

let proc;
let failed = false;
try {
  const started = Date.now();
  const bin = join(dir, 'coupond');
  execFileSync('go', ['build', '-o', bin, './cmd/coupond'], { cwd: repo, stdio: 'inherit' });
  const port = await freePort();
  let token;
  ({ proc, token } = await serve(bin, port));
  const url = `http://127.0.0.1:${port}/graphql`;
  const fetchFn = (input, init = {}) =>
    fetch(input, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });

  const counts = {};
  for (const a of serverAudits({ url, fetchFn })) {
    const r = await a.fn();
    const level = /^(MUST|SHOULD|MAY)/.exec(r.name)?.[1] ?? 'OTHER';
    counts[level] ??= { ok: 0, warn: 0, notice: 0, error: 0 };
    counts[level][r.status] += 1;
    if (r.status === 'ok') {
      console.log(`ok     ${r.id} ${r.name}`);
      continue;
    }
    if (level !== 'MAY') failed = true;
    let body = '';
    try { body = await r.response.text(); } catch { /* already read */ }
    console.log(`${r.status.padEnd(6)} ${r.id} ${r.name}\n       ${r.reason}: ${r.response.status} ${body.slice(0, 300)}`);
  }
  console.log('\nlevel   ok  warn  notice  error');
  for (const [level, c] of Object.entries(counts)) {
    console.log(`${level.padEnd(6)} ${String(c.ok).padStart(3)} ${String(c.warn).padStart(5)} ${String(c.notice).padStart(7)} ${String(c.error).padStart(6)}`);
  }
  console.log(`\n${failed ? 'FAIL' : 'PASS'}: graphql-http ${(await import('graphql-http/package.json', { with: { type: 'json' } })).default.version} server audits in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (err) {
  console.error(err);
  failed = true;
} finally {
  await stop(proc);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
