import { useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery } from 'urql';
import { useAuth } from '../app/auth';
import { saveBlob } from '../app/download';
import { useI18n } from '../app/i18n';
import { Card, Field, PageHeader } from '../components/Page';
import { Alert, Loading } from '../components/States';
import { graphql } from '../gql';
import { NDJSONReader, type Progress, type Rejection, uploadRequestId } from '../lib/importUpload';

const CampaignForImportDocument = graphql(`
  query CampaignForImport($id: ID!) {
    campaign(id: $id) {
      id
      name
      codeSource
      state
      issued
      totalQuantity
    }
  }
`);

interface UploadOptions {
  token: string;
  campaignId: string;
  requestId: string;
  body: Blob;
  batch: number;
  line: number;
  onSent: (loaded: number, total: number) => void;
  onProgress: (p: Progress) => void;
}

/** upload posts the file (or its rest) and reports the streamed progress; it resolves with an error message or null. */
function upload(o: UploadOptions): Promise<string | null> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    const q = new URLSearchParams({ campaignId: o.campaignId, requestId: o.requestId });
    if (o.batch > 1) {
      q.set('batch', String(o.batch));
      q.set('line', String(o.line));
    }
    xhr.open('POST', `/import/coupons.csv?${q}`);
    xhr.setRequestHeader('Authorization', `Bearer ${o.token}`);
    xhr.setRequestHeader('Content-Type', 'text/csv');
    const reader = new NDJSONReader();
    let failure: string | null = null;
    const drain = () => {
      if (xhr.status !== 200) return;
      for (const p of reader.next(xhr.responseText)) {
        if (p.error) failure = p.error.message;
        else o.onProgress(p);
      }
    };
    xhr.upload.onprogress = (e) => o.onSent(e.loaded, e.total);
    xhr.onprogress = drain;
    xhr.onload = () => {
      if (xhr.status !== 200) {
        try {
          const body = JSON.parse(xhr.responseText) as { errors?: { message?: string }[] };
          return resolve(body.errors?.[0]?.message ?? `HTTP ${xhr.status}`);
        } catch {
          return resolve(`HTTP ${xhr.status}`);
        }
      }
      drain();
      resolve(failure);
    };
    xhr.onerror = () => resolve('');
    xhr.send(o.body);
  });
}

const SHOWN = 200;

const size = (bytes: number) => (bytes < 1048576 ? `${Math.ceil(bytes / 1024)} kB` : `${(bytes / 1048576).toFixed(1)} MB`);
const KEPT = 100_000;

/** ImportCodesPage uploads a CSV file of the merchant's own codes into an IMPORTED campaign, with progress and the per-line report. */
export function ImportCodesPage() {
  const { id = '' } = useParams();
  const { t, tk } = useI18n();
  const { token } = useAuth();
  const [res, reexecute] = useQuery({ query: CampaignForImportDocument, variables: { id } });
  const fileInput = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<{ loaded: number; total: number } | null>(null);
  const [last, setLast] = useState<Progress | null>(null);
  const [rejected, setRejected] = useState<Rejection[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const [finished, setFinished] = useState(false);

  async function start(resume: boolean) {
    if (!file || !token) return setProblem(t('import.noFile'));
    const from = resume && last && !last.done ? last : null;
    if (!from) {
      setLast(null);
      setRejected([]);
    }
    setProblem(null);
    setFinished(false);
    setBusy(true);
    const base = from ? from.offset : 0;
    const err = await upload({
      token,
      campaignId: id,
      requestId: uploadRequestId(id, file),
      body: from ? file.slice(from.offset) : file,
      batch: from ? (from.batch ?? 0) + 1 : 1,
      line: from ? (from.lastLine ?? 0) + 1 : 1,
      onSent: (loaded) => setSent({ loaded: base + loaded, total: file.size }),
      onProgress: (p) => {
        // A resumed upload counts from where it began; the totals are the file's.
        const merged = from ? { ...p, offset: base + p.offset, lines: from.lines + p.lines, imported: from.imported + p.imported, rejected: from.rejected + p.rejected } : p;
        setLast((prev) => (merged.done ? { ...prev!, ...merged } : merged));
        if (merged.done) setFinished(true);
        if (p.rejectedLines?.length) setRejected((r) => (r.length >= KEPT ? r : r.concat(p.rejectedLines!.slice(0, KEPT - r.length))));
      },
    });
    setBusy(false);
    if (err !== null) setProblem(t('import.failed', { message: err || t('import.network') }));
    reexecute({ requestPolicy: 'network-only' });
  }

  function downloadReport() {
    const rows = [['line', 'code', 'reason'], ...rejected.map((r) => [String(r.line), r.code, r.reason])];
    const csv = rows.map((r) => r.map((v) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(',')).join('\n');
    saveBlob(new Blob([csv + '\n'], { type: 'text/csv' }), `import-${id}-report.csv`);
  }

  const c = res.data?.campaign;
  if (res.fetching && !c) return <Loading />;
  if (!c) return <Alert kind="error">{res.error?.message ?? t('state.notFound')}</Alert>;
  const pct = sent && sent.total ? Math.min(100, (sent.loaded / sent.total) * 100) : 0;
  return (
    <>
      <PageHeader title={t('import.title', { name: c.name })} actions={<Link to="/campaigns" className="btn">← {t('state.back')}</Link>} />
      {c.codeSource !== 'IMPORTED' ? (
        <Alert kind="warning">{t('import.notImported')}</Alert>
      ) : (
        <Card>
          <p className="muted">{t('import.help')}</p>
          <p data-testid="import-budget">
            {t('import.budget', { issued: c.issued.toLocaleString(), total: c.totalQuantity.toLocaleString(), left: (c.totalQuantity - c.issued).toLocaleString() })}
          </p>
          <div className="form-row import-row">
            <Field label={t('import.file')}>
              <input
                ref={fileInput}
                type="file"
                accept=".csv,.txt,text/csv,text/plain"
                data-testid="import-file"
                disabled={busy}
                onChange={(e) => {
                  setFile(e.target.files?.[0] ?? null);
                  setLast(null);
                  setRejected([]);
                  setSent(null);
                  setProblem(null);
                  setFinished(false);
                }}
              />
            </Field>
            <div className="form-actions">
              <button type="button" className="btn btn-primary" data-testid="import-start" disabled={busy || !file} onClick={() => start(false)}>
                {busy ? t('import.uploading') : problem && last ? t('import.again') : t('import.start')}
              </button>
              {problem && last && !last.done && (
                <button type="button" className="btn" data-testid="import-resume" disabled={busy} onClick={() => start(true)}>
                  {t('import.resume')}
                </button>
              )}
            </div>
          </div>
          {sent && (
            <div data-testid="import-progress">
              <div className="progress">
                <div className="progress-bar" style={{ width: `${pct}%` }} />
              </div>
              <div className="cell-note">
                {t('import.sent', { sent: size(sent.loaded), total: size(sent.total) })}
                {last && ` · ${t('import.progress', { lines: last.lines.toLocaleString(), imported: last.imported.toLocaleString(), rejected: last.rejected.toLocaleString() })}`}
              </div>
            </div>
          )}
          {finished && last && (
            <Alert kind={last.rejected ? 'warning' : 'success'}>
              <span data-testid="import-done">{t('import.done', { imported: last.imported.toLocaleString(), rejected: last.rejected.toLocaleString() })}</span>
            </Alert>
          )}
          {problem && <Alert kind="error">{problem}</Alert>}
        </Card>
      )}
      {rejected.length > 0 && (
        <Card
          title={t('import.report')}
          actions={
            <button type="button" className="btn btn-small" onClick={downloadReport}>
              ↓ {t('import.downloadReport')}
            </button>
          }
        >
          <table className="table" data-testid="import-report">
            <thead>
              <tr>
                <th>{t('import.line')}</th>
                <th>{t('import.code')}</th>
                <th>{t('import.reason')}</th>
              </tr>
            </thead>
            <tbody>
              {rejected.slice(0, SHOWN).map((r) => (
                <tr key={r.line}>
                  <td className="mono">{r.line}</td>
                  <td className="mono">{r.code}</td>
                  <td>{tk(`import.reason.${r.reason}`)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {(last?.rejected ?? 0) > SHOWN && <div className="cell-note">{t('import.reportMore', { shown: SHOWN, n: (last?.rejected ?? 0).toLocaleString() })}</div>}
        </Card>
      )}
    </>
  );
}
