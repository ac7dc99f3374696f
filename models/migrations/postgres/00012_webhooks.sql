-- +goose Up
-- The outbox: one row per event a merchant can subscribe to, written in the
-- transaction (or statement) of the change it describes. txid is the writing
-- transaction's id: a reader that pages by (txid, id) and reads only rows
-- older than the oldest transaction still running never skips a row that
-- commits out of id order (see docs/webhooks.md).
CREATE TABLE outbox_events (
    merchant_id BIGINT      NOT NULL REFERENCES merchants (id),
    id          BIGSERIAL   NOT NULL,
    uid         TEXT        NOT NULL,
    type        TEXT        NOT NULL,
    coupon_id   BIGINT      NOT NULL DEFAULT 0,
    data        TEXT        NOT NULL,
    txid        BIGINT      NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (merchant_id, uid)
);
CREATE INDEX outbox_events_feed ON outbox_events (merchant_id, txid, id);

-- A merchant's webhook endpoints; events is the comma-separated list of
-- subscribed types. previous_secret also signs until previous_until.
CREATE TABLE webhook_endpoints (
    merchant_id     BIGINT      NOT NULL REFERENCES merchants (id),
    id              BIGINT      NOT NULL,
    url             TEXT        NOT NULL,
    description     TEXT        NOT NULL DEFAULT '',
    events          TEXT        NOT NULL,
    enabled         BOOLEAN     NOT NULL DEFAULT TRUE,
    disabled_reason TEXT,
    secret          TEXT        NOT NULL,
    previous_secret TEXT,
    previous_until  TIMESTAMPTZ,
    failing_since   TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, id)
);

-- One row per event and subscribed endpoint, written with the event; the
-- delivery worker claims due rows by conditional update.
CREATE TABLE webhook_deliveries (
    merchant_id      BIGINT      NOT NULL,
    endpoint_id      BIGINT      NOT NULL,
    event_id         BIGINT      NOT NULL,
    coupon_id        BIGINT      NOT NULL DEFAULT 0,
    status           TEXT        NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
    attempts         INT         NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMPTZ NOT NULL,
    lease_until      TIMESTAMPTZ,
    last_attempt_at  TIMESTAMPTZ,
    last_status_code INT,
    last_error       TEXT,
    last_response    TEXT,
    delivered_at     TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, endpoint_id, event_id),
    FOREIGN KEY (merchant_id, endpoint_id) REFERENCES webhook_endpoints (merchant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (merchant_id, event_id) REFERENCES outbox_events (merchant_id, id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (merchant_id, endpoint_id, coupon_id, event_id)
    WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (merchant_id, event_id);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
DROP TABLE outbox_events;
