import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { useI18n } from '../app/i18n';
import { useIdempotentMutation } from '../app/idempotent';
import { useCursorPager } from '../app/pager';
import { useFormat, useViewer, type Role } from '../app/viewer';
import { ConfirmButton } from '../components/Confirm';
import { DataTable } from '../components/DataTable';
import { Card, Field, PageHeader } from '../components/Page';
import { Alert, useErrorText } from '../components/States';
import { graphql } from '../gql';
import type { CreateTokenInput, TokensQuery } from '../gql/graphql';
import { localInputToUtc } from '../lib/dates';
import { attemptKey } from '../lib/requestId';

export const TokensDocument = graphql(`
  query Tokens($first: Int, $after: String) {
    tokens(first: $first, after: $after) {
      edges {
        cursor
        node {
          id
          name
          role
          createdAt
          lastUsedAt
          expiresAt
          revokedAt
          stores {
            id
            name
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const CreateTokenDocument = graphql(`
  mutation CreateToken($input: CreateTokenInput!) {
    createToken(input: $input) {
      token
      apiToken {
        id
        name
        role
        createdAt
        expiresAt
        revokedAt
      }
    }
  }
`);

const RevokeTokenDocument = graphql(`
  mutation RevokeToken($input: RevokeTokenInput!) {
    revokeToken(input: $input) {
      id
      name
      revokedAt
    }
  }
`);

type Row = TokensQuery['tokens']['edges'][number]['node'];
const col = createColumnHelper<Row>();
const PAGE = 25;
const ROLES: Role[] = ['CLERK', 'FINANCE', 'ADMIN', 'APP'];

/** copyText copies to the clipboard; without the Clipboard API (plain HTTP on a LAN) it copies the selected input. */
async function copyText(text: string, input: HTMLInputElement | null): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the selection
  }
  if (!input) return false;
  input.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}

/** SecretPanel shows a new token's secret, once: closing it drops the secret from the page. */
function SecretPanel({ name, secret, onClose }: { name: string; secret: string | null; onClose: () => void }) {
  const { t } = useI18n();
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<boolean | null>(null);
  if (!secret) {
    return (
      <Alert kind="warning" title={t('tokens.secretTitle', { name })}>
        {t('tokens.secretLost')}
        <div className="panel-actions">
          <button type="button" className="btn btn-small" onClick={onClose}>
            {t('common.close')}
          </button>
        </div>
      </Alert>
    );
  }
  return (
    <div data-testid="token-secret">
      <Alert kind="warning" title={t('tokens.secretTitle', { name })}>
        <strong>{t('tokens.secretWarning')}</strong>
        <div className="secret-box">
          <input ref={input} readOnly value={secret} aria-label={t('signIn.token')} data-testid="token-secret-value" onFocus={(e) => e.target.select()} />
          <button
            type="button"
            className="btn btn-primary"
            data-testid="copy-secret"
            onClick={async () => setCopied(await copyText(secret, input.current))}
          >
            {copied ? `✓ ${t('tokens.copied')}` : t('tokens.copy')}
          </button>
        </div>
        {copied === false && <div className="field-error">{t('tokens.copyFailed')}</div>}
        <div className="panel-actions">
          <button type="button" className="btn btn-small" data-testid="secret-done" onClick={onClose}>
            {t('tokens.done')}
          </button>
        </div>
      </Alert>
    </div>
  );
}

function CreateTokenForm({ onCreated }: { onCreated: (name: string, secret: string | null) => void }) {
  const { t, tk } = useI18n();
  const { stores } = useViewer();
  const fmt = useFormat();
  const errorText = useErrorText();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('CLERK');
  const [storeIds, setStoreIds] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const { fetching, run, retry, clearRetry } = useIdempotentMutation(CreateTokenDocument);
  useEffect(clearRetry, [name, role, storeIds, expires, clearRetry]);

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setProblem(null);
    const n = name.trim();
    if (n.length > 100) return setProblem(t('tokens.badName'));
    if (role === 'CLERK' && storeIds.length === 0) return setProblem(t('tokens.storesRequired'));
    let expiresAt: string | undefined;
    if (expires) {
      const d = localInputToUtc(expires, fmt.timezone);
      if (!d || d.getTime() <= Date.now()) return setProblem(t('tokens.badExpiry'));
      expiresAt = d.toISOString();
    }
    const input: Omit<CreateTokenInput, 'requestId'> = {
      name: n || undefined,
      role,
      storeIds: role === 'CLERK' ? [...storeIds].sort() : undefined,
      expiresAt,
    };
    const res = await run(attemptKey(JSON.stringify(input)), (requestId) => ({ input: { ...input, requestId } }), { additionalTypenames: ['ApiToken'] });
    if (res.data) {
      onCreated(res.data.createToken.apiToken.name, res.data.createToken.token ?? null);
      setName('');
      setExpires('');
      setStoreIds([]);
    } else setProblem(errorText(res.error));
  }
  const showRetry = retry;

  return (
    <form className="form-grid" onSubmit={submit} data-testid="create-token" noValidate>
      <Field label={t('tokens.name')}>
        <input name="name" value={name} maxLength={100} placeholder={t('tokens.namePlaceholder')} onChange={(e) => setName(e.target.value)} />
      </Field>
      <Field label={t('tokens.role')}>
        <select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {tk(`role.${r}`)}
            </option>
          ))}
        </select>
      </Field>
      {role === 'APP' && (
        <div className="field field-wide field-hint" data-testid="app-role-hint">
          {t('tokens.appHint')}
        </div>
      )}
      <Field label={t('tokens.expiresAt')}>
        <input name="expiresAt" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
      </Field>
      {role === 'CLERK' && (
        <fieldset className="field field-wide">
          <legend className="field-label">{t('tokens.stores')}</legend>
          <div className="chips">
            {stores.map((s) => (
              <label key={s.id} className={`chip ${storeIds.includes(s.id) ? 'active' : ''}`}>
                <input
                  type="checkbox"
                  name="store"
                  value={s.id}
                  checked={storeIds.includes(s.id)}
                  onChange={(e) => setStoreIds(e.target.checked ? [...storeIds, s.id] : storeIds.filter((x) => x !== s.id))}
                />
                {s.name}
              </label>
            ))}
          </div>
          <span className="field-hint">{t('tokens.storesHint')}</span>
        </fieldset>
      )}
      <div className="form-actions field-wide">
        {problem && <Alert kind={showRetry ? 'warning' : 'error'}>{showRetry ? `${problem} ${t('common.retryNote')}` : problem}</Alert>}
        <button type="submit" className="btn btn-primary" disabled={fetching} data-testid="create-token-submit">
          {fetching ? t('tokens.creating') : showRetry ? t('common.retrySame') : t('tokens.create')}
        </button>
      </div>
    </form>
  );
}

/** TokensPage lists the merchant's API tokens; an admin creates them (the secret shown once) and revokes them. */
export function TokensPage() {
  const { t, tk } = useI18n();
  const fmt = useFormat();
  const errorText = useErrorText();
  const pager = useCursorPager('all');
  const [res, reexecute] = useQuery({ query: TokensDocument, variables: { first: PAGE, after: pager.after } });
  const [{ fetching: revoking }, revoke] = useMutation(RevokeTokenDocument);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ name: string; secret: string | null } | null>(null);
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);

  async function doRevoke(r: Row) {
    setNote(null);
    const out = await revoke({ input: { id: r.id } }, { additionalTypenames: ['ApiToken'] });
    if (out.data) setNote({ kind: 'success', text: t('tokens.revokedOk', { name: out.data.revokeToken.name }) });
    else setNote({ kind: 'error', text: errorText(out.error) });
  }

  const columns = useMemo(
    () => [
      col.accessor('name', {
        header: t('tokens.name'),
        cell: (c) => (
          <div>
            <div className="strong">{c.getValue()}</div>
            <div className="cell-note mono">#{c.row.original.id}</div>
          </div>
        ),
      }),
      col.accessor('role', { header: t('tokens.role'), cell: (c) => <span className="badge badge-info">{tk(`role.${c.getValue()}`)}</span> }),
      col.accessor('stores', {
        header: t('tokens.stores'),
        cell: (c) => (c.getValue().length ? c.getValue().map((s) => s.name).join(', ') : <span className="muted">—</span>),
      }),
      col.accessor('createdAt', { header: t('tokens.created'), cell: (c) => <span className="nowrap">{fmt.dateTime(c.getValue())}</span> }),
      col.accessor('lastUsedAt', {
        header: t('tokens.lastUsed'),
        cell: (c) => (c.getValue() ? <span className="nowrap">{fmt.dateTime(c.getValue())}</span> : <span className="muted">{t('tokens.never')}</span>),
      }),
      col.accessor('expiresAt', {
        header: t('tokens.expires'),
        cell: (c) => (c.getValue() ? <span className="nowrap">{fmt.dateTime(c.getValue())}</span> : <span className="muted">{t('tokens.noExpiry')}</span>),
      }),
      col.display({
        id: 'status',
        header: t('common.status'),
        cell: (c) => {
          const r = c.row.original;
          if (r.revokedAt)
            return (
              <div>
                <span className="badge badge-danger" data-status="REVOKED">{t('tokens.revokedAt')}</span>
                <div className="cell-note nowrap">{fmt.dateTime(r.revokedAt)}</div>
              </div>
            );
          if (r.expiresAt && new Date(r.expiresAt).getTime() <= Date.now()) return <span className="badge badge-muted">{t('tokens.expired')}</span>;
          return <span className="badge badge-success">{t('tokens.active')}</span>;
        },
      }),
      col.display({
        id: 'actions',
        header: t('common.actions'),
        cell: (c) =>
          c.row.original.revokedAt ? null : (
            <ConfirmButton
              small
              danger
              testId="revoke-token"
              disabled={revoking}
              label={t('tokens.revoke')}
              question={t('tokens.revokeConfirm', { name: c.row.original.name })}
              confirmLabel={t('tokens.revokeYes')}
              onConfirm={() => doRevoke(c.row.original)}
            />
          ),
      }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, tk, fmt, revoking],
  );
  const rows = res.data?.tokens.edges.map((e) => e.node);
  const pageInfo = res.data?.tokens.pageInfo;
  return (
    <>
      <PageHeader
        title={t('tokens.title')}
        subtitle={`${t('tokens.subtitle')} ${t('common.timezone', { tz: fmt.timezone })}`}
        actions={
          !creating && (
            <button type="button" className="btn btn-primary" data-testid="new-token" onClick={() => setCreating(true)}>
              + {t('tokens.new')}
            </button>
          )
        }
      />
      {secret && <SecretPanel name={secret.name} secret={secret.secret} onClose={() => setSecret(null)} />}
      {note && <Alert kind={note.kind}>{note.text}</Alert>}
      {creating && (
        <Card
          title={t('tokens.new')}
          actions={
            <button type="button" className="btn btn-ghost btn-small" onClick={() => setCreating(false)}>
              {t('common.close')}
            </button>
          }
        >
          <CreateTokenForm
            onCreated={(name, s) => {
              setSecret({ name, secret: s });
              setCreating(false);
              setNote(null);
            }}
          />
        </Card>
      )}
      <Card>
        <DataTable
          testId="tokens-table"
          columns={columns}
          data={rows}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('tokens.empty')}
          rowKey={(r) => r.id}
          pager={{ page: pager.page, hasPrev: pager.hasPrev, hasNext: !!pageInfo?.hasNextPage, onPrev: pager.prev, onNext: () => pager.next(pageInfo?.endCursor) }}
        />
      </Card>
    </>
  );
}
