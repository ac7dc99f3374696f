-- +goose Up
-- The outbox: one row per event a merchant can subscribe to, written in the
-- transaction of the change it describes. SQLite runs one writer at a time,
-- so ids (MAX(id) + 1, assigned inside the write lock) are in commit order
-- and txid stays 0 (see docs/webhooks.md).
CREATE TABLE outbox_events (
    merchant_id BIGINT      NOT NULL REFERENCES merchants (id),
    id          INTEGER     NOT NULL,
    uid         TEXT        NOT NULL,
    type        TEXT        NOT NULL,
    coupon_id   BIGINT      NOT NULL DEFAULT 0,
    data        TEXT        NOT NULL,
    txid        BIGINT      NOT NULL DEFAULT 0,
    created_at  DATETIME    NOT NULL,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (merchant_id, uid)
);
CREATE INDEX outbox_events_feed ON outbox_events (merchant_id, txid, id);
CREATE INDEX outbox_events_id ON outbox_events (id);

-- A merchant's webhook endpoints; events is the comma-separated list of
-- subscribed types. previous_secret also signs until previous_until.
CREATE TABLE webhook_endpoints (
    merchant_id     BIGINT      NOT NULL REFERENCES merchants (id),
    id              BIGINT      NOT NULL,
    url             TEXT        NOT NULL,
    description     TEXT        NOT NULL DEFAULT '',
    events          TEXT        NOT NULL,
    enabled         BOOLEAN     NOT NULL DEFAULT 1,
    disabled_reason TEXT,
    secret          TEXT        NOT NULL,
    previous_secret TEXT,
    previous_until  DATETIME   ,
    failing_since   DATETIME   ,
    created_at      DATETIME    NOT NULL,
    updated_at      DATETIME    NOT NULL,
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
    next_attempt_at  DATETIME    NOT NULL,
    lease_until      DATETIME   ,
    last_attempt_at  DATETIME   ,
    last_status_code INT,
    last_error       TEXT,
    last_response    TEXT,
    delivered_at     DATETIME   ,
    created_at       DATETIME    NOT NULL,
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
