import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { useI18n } from '../app/i18n';
import { useIdempotentMutation } from '../app/idempotent';
import { useCursorPager } from '../app/pager';
import { useFormat } from '../app/viewer';
import { ConfirmButton } from '../components/Confirm';
import { DataTable } from '../components/DataTable';
import { SelectFilter } from '../components/Filters';
import { Card, Field, PageHeader } from '../components/Page';
import { Alert, useErrorText } from '../components/States';
import { graphql } from '../gql';
import type { WebhookDeliveriesQuery, WebhookDeliveryStatus, WebhookEndpointsQuery } from '../gql/graphql';
import { attemptKey } from '../lib/requestId';

const EndpointsDocument = graphql(`
  query WebhookEndpoints {
    webhookEndpoints {
      id
      url
      description
      events
      enabled
      disabledReason
      previousSecretUntil
      createdAt
    }
  }
`);

const CreateEndpointDocument = graphql(`
  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      endpoint {
        id
        url
        events
        enabled
      }
      secret
    }
  }
`);

const UpdateEndpointDocument = graphql(`
  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {
    updateWebhookEndpoint(input: $input) {
      id
      enabled
      disabledReason
    }
  }
`);

const RotateSecretDocument = graphql(`
  mutation RotateWebhookSecret($input: RotateWebhookSecretInput!) {
    rotateWebhookSecret(input: $input) {
      endpoint {
        id
        previousSecretUntil
      }
      secret
    }
  }
`);

const DeleteEndpointDocument = graphql(`
  mutation DeleteWebhookEndpoint($input: DeleteWebhookEndpointInput!) {
    deleteWebhookEndpoint(input: $input) {
      id
    }
  }
`);

const ReplayDocument = graphql(`
  mutation ReplayWebhookEvents($input: ReplayWebhookEventsInput!) {
    replayWebhookEvents(input: $input) {
      endpoint {
        id
        url
      }
      queued
    }
  }
`);

const DeliveriesDocument = graphql(`
  query WebhookDeliveries($filter: WebhookDeliveryFilter, $first: Int, $after: String) {
    webhookDeliveries(filter: $filter, first: $first, after: $after) {
      edges {
        cursor
        node {
          eventId
          eventType
          endpointId
          status
          attempts
          lastStatusCode
          lastError
          lastAttemptAt
          nextAttemptAt
          responseBody
          deliveredAt
          createdAt
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const RedeliverDocument = graphql(`
  mutation RedeliverEvent($input: RedeliverEventInput!) {
    redeliverEvent(input: $input) {
      eventId
      status
    }
  }
`);

/** EVENT_TYPES are the event types an endpoint can subscribe to (docs/webhooks.md). */
export const EVENT_TYPES = [
  'redemption.succeeded',
  'redemption.released',
  'redemption.refunded',
  'coupon.reissued',
  'coupon.issued',
  'coupon.expired',
  'coupon.voided',
  'finding.opened',
];
const STATUSES: WebhookDeliveryStatus[] = ['PENDING', 'DELIVERED', 'FAILED'];
const PAGE = 25;

type Endpoint = WebhookEndpointsQuery['webhookEndpoints'][number];
type Delivery = WebhookDeliveriesQuery['webhookDeliveries']['edges'][number]['node'];
const ecol = createColumnHelper<Endpoint>();
const dcol = createColumnHelper<Delivery>();

/** SecretShown shows an endpoint's signing secret, once. */
function SecretShown({ url, secret, onClose }: { url: string; secret: string; onClose: () => void }) {
  const { t } = useI18n();
  return (
    <div data-testid="webhook-secret">
      <Alert kind="warning" title={t('webhooks.secretTitle', { url })}>
        <strong>{t('webhooks.secretWarning')}</strong>
        <div className="secret-box">
          <input readOnly value={secret} aria-label={t('webhooks.secret')} data-testid="webhook-secret-value" onFocus={(e) => e.target.select()} />
        </div>
        <div className="panel-actions">
          <button type="button" className="btn btn-small" data-testid="webhook-secret-done" onClick={onClose}>
            {t('tokens.done')}
          </button>
        </div>
      </Alert>
    </div>
  );
}

function CreateEndpointForm({ onCreated }: { onCreated: (url: string, secret: string) => void }) {
  const { t } = useI18n();
  const errorText = useErrorText();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['redemption.succeeded', 'redemption.refunded']);
  const [problem, setProblem] = useState<string | null>(null);
  const { fetching, run, retry, clearRetry } = useIdempotentMutation(CreateEndpointDocument);
  useEffect(clearRetry, [url, description, events, clearRetry]);

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setProblem(null);
    if (!/^https?:\/\/\S+$/.test(url.trim())) return setProblem(t('webhooks.badUrl'));
    if (events.length === 0) return setProblem(t('webhooks.eventsRequired'));
    const input = { url: url.trim(), description: description.trim() || undefined, events: EVENT_TYPES.filter((x) => events.includes(x)) };
    const res = await run(attemptKey(JSON.stringify(input)), (requestId) => ({ input: { ...input, requestId } }), {
      additionalTypenames: ['WebhookEndpoint'],
    });
    if (res.data) {
      onCreated(res.data.createWebhookEndpoint.endpoint.url, res.data.createWebhookEndpoint.secret);
      setUrl('');
      setDescription('');
    } else setProblem(errorText(res.error));
  }

  return (
    <form className="form-grid" onSubmit={submit} data-testid="create-webhook" noValidate>
      <Field label={t('webhooks.url')} hint={t('webhooks.urlHint')}>
        <input name="url" value={url} maxLength={2048} placeholder="https://pos.example.com/coupond" onChange={(e) => setUrl(e.target.value)} />
      </Field>
      <Field label={t('webhooks.description')}>
        <input name="description" value={description} maxLength={500} onChange={(e) => setDescription(e.target.value)} />
      </Field>
      <fieldset className="field field-wide">
        <legend className="field-label">{t('webhooks.events')}</legend>
        <div className="chips">
          {EVENT_TYPES.map((x) => (
            <label key={x} className={`chip ${events.includes(x) ? 'active' : ''}`}>
              <input
                type="checkbox"
                name="event"
                value={x}
                checked={events.includes(x)}
                onChange={(e) => setEvents(e.target.checked ? [...events, x] : events.filter((y) => y !== x))}
              />
              <span className="mono">{x}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <div className="form-actions field-wide">
        {problem && <Alert kind={retry ? 'warning' : 'error'}>{retry ? `${problem} ${t('common.retryNote')}` : problem}</Alert>}
        <button type="submit" className="btn btn-primary" disabled={fetching} data-testid="create-webhook-submit">
          {fetching ? t('tokens.creating') : retry ? t('common.retrySame') : t('webhooks.create')}
        </button>
      </div>
    </form>
  );
}

function statusBadge(s: WebhookDeliveryStatus) {
  return s === 'DELIVERED' ? 'badge-success' : s === 'FAILED' ? 'badge-danger' : 'badge-warning';
}

/** Deliveries lists deliveries with their last answer, and sends one again. */
function Deliveries({ endpoints }: { endpoints: Endpoint[] }) {
  const { t, tk } = useI18n();
  const fmt = useFormat();
  const errorText = useErrorText();
  const [status, setStatus] = useState('');
  const pager = useCursorPager(status);
  const filter = status ? { status: status as WebhookDeliveryStatus } : undefined;
  const deliveriesContext = useMemo(() => ({ additionalTypenames: ['WebhookDelivery'] }), []);
  const [res, reexecute] = useQuery({
    query: DeliveriesDocument,
    variables: { filter, first: PAGE, after: pager.after },
    requestPolicy: 'cache-and-network',
    context: deliveriesContext,
  });
  const [{ fetching: sending }, redeliver] = useMutation(RedeliverDocument);
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const urlOf = (id: string) => endpoints.find((e) => e.id === id)?.url ?? `#${id}`;

  async function send(d: Delivery) {
    setNote(null);
    const out = await redeliver({ input: { eventId: d.eventId, endpointId: d.endpointId } }, { additionalTypenames: ['WebhookDelivery'] });
    if (out.data) {
      setNote({ kind: 'success', text: t('webhooks.redelivered', { id: d.eventId }) });
      reexecute({ requestPolicy: 'network-only' });
    } else setNote({ kind: 'error', text: errorText(out.error) });
  }

  const columns = useMemo(
    () => [
      dcol.accessor('eventId', {
        header: t('webhooks.event'),
        cell: (c) => (
          <div>
            <div className="mono strong">{c.row.original.eventType}</div>
            <div className="cell-note mono">{c.getValue()}</div>
          </div>
        ),
      }),
      dcol.accessor('endpointId', { header: t('webhooks.endpoint'), cell: (c) => <span className="mono">{urlOf(c.getValue())}</span> }),
      dcol.accessor('status', {
        header: t('common.status'),
        cell: (c) => (
          <span className={`badge ${statusBadge(c.getValue())}`} data-status={c.getValue()}>
            {tk(`status.${c.getValue()}`)}
          </span>
        ),
      }),
      dcol.accessor('attempts', { header: t('webhooks.attempts'), cell: (c) => <span data-testid="attempts">{c.getValue()}</span> }),
      dcol.display({
        id: 'last',
        header: t('webhooks.lastAnswer'),
        cell: (c) => {
          const d = c.row.original;
          return (
            <div>
              {d.lastStatusCode != null && <span className="mono">HTTP {d.lastStatusCode}</span>}
              {d.lastError && <div className="cell-note">{d.lastError}</div>}
              {d.lastAttemptAt && <div className="cell-note nowrap">{fmt.dateTime(d.lastAttemptAt)}</div>}
              {d.responseBody ? (
                <details>
                  <summary>{t('webhooks.response')}</summary>
                  <pre className="mono" data-testid="response-body">{d.responseBody}</pre>
                </details>
              ) : null}
            </div>
          );
        },
      }),
      dcol.accessor('nextAttemptAt', {
        header: t('webhooks.nextAttempt'),
        cell: (c) => (c.getValue() ? <span className="nowrap">{fmt.dateTime(c.getValue())}</span> : <span className="muted">—</span>),
      }),
      dcol.display({
        id: 'actions',
        header: t('common.actions'),
        cell: (c) => (
          <button type="button" className="btn btn-small" data-testid="redeliver" disabled={sending} onClick={() => send(c.row.original)}>
            {t('webhooks.redeliver')}
          </button>
        ),
      }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, tk, fmt, sending, endpoints],
  );
  const pageInfo = res.data?.webhookDeliveries.pageInfo;
  return (
    <Card
      title={t('webhooks.deliveries')}
      actions={
        <div className="filters">
          <SelectFilter
            label={t('common.status')}
            name="status"
            value={status}
            onChange={setStatus}
            all={t('webhooks.allStatuses')}
            options={STATUSES.map((s) => ({ value: s, label: tk(`status.${s}`) }))}
          />
          <button type="button" className="btn btn-small" data-testid="refresh-deliveries" onClick={() => reexecute({ requestPolicy: 'network-only' })}>
            {t('webhooks.refresh')}
          </button>
        </div>
      }
    >
      {note && <Alert kind={note.kind}>{note.text}</Alert>}
      <DataTable
        testId="deliveries-table"
        columns={columns}
        data={res.data?.webhookDeliveries.edges.map((e) => e.node)}
        fetching={res.fetching}
        error={res.error}
        onRetry={() => reexecute({ requestPolicy: 'network-only' })}
        empty={t('webhooks.noDeliveries')}
        rowKey={(r) => `${r.eventId}/${r.endpointId}`}
        pager={{ page: pager.page, hasPrev: pager.hasPrev, hasNext: !!pageInfo?.hasNextPage, onPrev: pager.prev, onNext: () => pager.next(pageInfo?.endCursor) }}
      />
    </Card>
  );
}

/** localInput formats a time for a datetime-local input, in the browser's zone. */
function localInput(d: Date): string {
  const off = d.getTimezoneOffset() * 60000;
  return new Date(d.getTime() - off).toISOString().slice(0, 16);
}

/** Replay queues again, for one endpoint, the events of a window it missed (it was disabled, or gave up on them). */
function Replay({ endpoints }: { endpoints: Endpoint[] }) {
  const { t } = useI18n();
  const errorText = useErrorText();
  const [endpointId, setEndpointId] = useState('');
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - 24 * 3600 * 1000)));
  const [until, setUntil] = useState('');
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [{ fetching }, replay] = useMutation(ReplayDocument);
  if (!endpoints.length) return null;
  const chosen = endpointId || endpoints[0].id;

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setNote(null);
    const from = new Date(since);
    const to = until ? new Date(until) : undefined;
    if (Number.isNaN(from.getTime()) || (to && Number.isNaN(to.getTime()))) return setNote({ kind: 'error', text: t('webhooks.replayBadTime') });
    const out = await replay(
      { input: { endpointId: chosen, since: from.toISOString(), until: to?.toISOString() } },
      { additionalTypenames: ['WebhookDelivery'] },
    );
    if (out.data) {
      const r = out.data.replayWebhookEvents;
      setNote({ kind: 'success', text: t('webhooks.replayed', { n: String(r.queued), url: r.endpoint.url }) });
    } else setNote({ kind: 'error', text: errorText(out.error) });
  }

  return (
    <Card title={t('webhooks.replay')}>
      <p className="muted small">{t('webhooks.replayNote')}</p>
      <form className="form-grid" onSubmit={submit} data-testid="replay-webhooks" noValidate>
        <Field label={t('webhooks.endpoint')}>
          <select name="endpoint" value={chosen} onChange={(e) => setEndpointId(e.target.value)}>
            {endpoints.map((x) => (
              <option key={x.id} value={x.id}>
                {x.url}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('webhooks.replaySince')}>
          <input type="datetime-local" name="since" value={since} onChange={(e) => setSince(e.target.value)} />
        </Field>
        <Field label={t('webhooks.replayUntil')} hint={t('webhooks.replayUntilHint')}>
          <input type="datetime-local" name="until" value={until} onChange={(e) => setUntil(e.target.value)} />
        </Field>
        <div className="form-actions field-wide">
          {note && <Alert kind={note.kind}>{note.text}</Alert>}
          <button type="submit" className="btn" disabled={fetching} data-testid="replay-webhooks-submit">
            {t('webhooks.replaySubmit')}
          </button>
        </div>
      </form>
    </Card>
  );
}

/** WebhooksPage manages the merchant's webhook endpoints and shows their deliveries; administrators only. */
export function WebhooksPage() {
  const { t } = useI18n();
  const fmt = useFormat();
  const errorText = useErrorText();
  // The typename lets a mutation refetch the list even while it is empty.
  const endpointsContext = useMemo(() => ({ additionalTypenames: ['WebhookEndpoint'] }), []);
  const [res, reexecute] = useQuery({ query: EndpointsDocument, context: endpointsContext });
  const [{ fetching: updating }, update] = useMutation(UpdateEndpointDocument);
  const [{ fetching: rotating }, rotate] = useMutation(RotateSecretDocument);
  const [{ fetching: deleting }, remove] = useMutation(DeleteEndpointDocument);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [note, setNote] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const busy = updating || rotating || deleting;
  const ctx = { additionalTypenames: ['WebhookEndpoint'] };

  async function toggle(e: Endpoint) {
    setNote(null);
    const out = await update({ input: { id: e.id, enabled: !e.enabled } }, ctx);
    if (!out.data) setNote({ kind: 'error', text: errorText(out.error) });
  }
  async function doRotate(e: Endpoint) {
    setNote(null);
    const out = await rotate({ input: { id: e.id } }, ctx);
    if (out.data) setSecret({ url: e.url, secret: out.data.rotateWebhookSecret.secret });
    else setNote({ kind: 'error', text: errorText(out.error) });
  }
  async function doDelete(e: Endpoint) {
    setNote(null);
    const out = await remove({ input: { id: e.id } }, ctx);
    if (out.data) setNote({ kind: 'success', text: t('webhooks.deleted', { url: e.url }) });
    else setNote({ kind: 'error', text: errorText(out.error) });
  }

  const columns = useMemo(
    () => [
      ecol.accessor('url', {
        header: t('webhooks.url'),
        cell: (c) => (
          <div>
            <div className="mono strong">{c.getValue()}</div>
            <div className="cell-note">{c.row.original.description}</div>
          </div>
        ),
      }),
      ecol.accessor('events', { header: t('webhooks.events'), cell: (c) => <span className="mono">{c.getValue().join(', ')}</span> }),
      ecol.accessor('enabled', {
        header: t('common.status'),
        cell: (c) => (
          <div>
            <span className={`badge ${c.getValue() ? 'badge-success' : 'badge-muted'}`} data-status={c.getValue() ? 'ENABLED' : 'DISABLED'}>
              {c.getValue() ? t('webhooks.enabled') : t('webhooks.disabled')}
            </span>
            {c.row.original.disabledReason && <div className="cell-note">{c.row.original.disabledReason}</div>}
            {c.row.original.previousSecretUntil && (
              <div className="cell-note nowrap">{t('webhooks.bothSecrets', { until: fmt.dateTime(c.row.original.previousSecretUntil) })}</div>
            )}
          </div>
        ),
      }),
      ecol.display({
        id: 'actions',
        header: t('common.actions'),
        cell: (c) => (
          <div className="row-actions">
            <button type="button" className="btn btn-small" data-testid="toggle-webhook" disabled={busy} onClick={() => toggle(c.row.original)}>
              {c.row.original.enabled ? t('webhooks.disable') : t('webhooks.enable')}
            </button>
            <ConfirmButton
              small
              testId="rotate-webhook"
              disabled={busy}
              label={t('webhooks.rotate')}
              question={t('webhooks.rotateConfirm')}
              confirmLabel={t('webhooks.rotateYes')}
              onConfirm={() => doRotate(c.row.original)}
            />
            <ConfirmButton
              small
              danger
              testId="delete-webhook"
              disabled={busy}
              label={t('webhooks.delete')}
              question={t('webhooks.deleteConfirm', { url: c.row.original.url })}
              confirmLabel={t('webhooks.deleteYes')}
              onConfirm={() => doDelete(c.row.original)}
            />
          </div>
        ),
      }),
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, fmt, busy],
  );
  const endpoints = res.data?.webhookEndpoints ?? [];
  return (
    <>
      <PageHeader
        title={t('webhooks.title')}
        subtitle={t('webhooks.subtitle')}
        actions={
          !creating && (
            <button type="button" className="btn btn-primary" data-testid="new-webhook" onClick={() => setCreating(true)}>
              + {t('webhooks.new')}
            </button>
          )
        }
      />
      {secret && <SecretShown url={secret.url} secret={secret.secret} onClose={() => setSecret(null)} />}
      {note && <Alert kind={note.kind}>{note.text}</Alert>}
      {creating && (
        <Card
          title={t('webhooks.new')}
          actions={
            <button type="button" className="btn btn-ghost btn-small" onClick={() => setCreating(false)}>
              {t('common.close')}
            </button>
          }
        >
          <CreateEndpointForm
            onCreated={(url, s) => {
              setSecret({ url, secret: s });
              setCreating(false);
              setNote(null);
            }}
          />
        </Card>
      )}
      <Card title={t('webhooks.endpoints')}>
        <DataTable
          testId="webhooks-table"
          columns={columns}
          data={res.data?.webhookEndpoints}
          fetching={res.fetching}
          error={res.error}
          onRetry={() => reexecute({ requestPolicy: 'network-only' })}
          empty={t('webhooks.empty')}
          rowKey={(r) => r.id}
        />
      </Card>
      <Deliveries endpoints={endpoints} />
      <Replay endpoints={endpoints} />
    </>
  );
}
