-- +goose Up
-- Several codes on one order (redeemCoupons); see the PostgreSQL migration
-- of the same number for what each part is for.
ALTER TABLE campaigns ADD COLUMN stackable BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE redemption_orders (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id     BIGINT      NOT NULL REFERENCES merchants (id),
    request_id      TEXT        NOT NULL,
    fingerprint     TEXT        NOT NULL,
    order_no        TEXT        NOT NULL,
    store_id        BIGINT      NOT NULL,
    operator_id     BIGINT,
    customer_ref    TEXT,
    status          TEXT        NOT NULL CHECK (status IN ('PROCESSING', 'SUCCEEDED', 'REJECTED', 'RELEASED')),
    codes           TEXT        NOT NULL,
    code_count      BIGINT      NOT NULL,
    refunded        BIGINT      NOT NULL DEFAULT 0,
    order_amount    BIGINT      NOT NULL,
    discount_amount BIGINT      NOT NULL DEFAULT 0,
    order_ref       TEXT,
    verdicts        TEXT        NOT NULL DEFAULT '',
    fenced_at       DATETIME,
    version         BIGINT      NOT NULL DEFAULT 0,
    created_at      DATETIME    NOT NULL,
    updated_at      DATETIME    NOT NULL,
    finished_at     DATETIME,
    UNIQUE (merchant_id, request_id),
    CHECK (refunded >= 0 AND refunded <= code_count)
);

ALTER TABLE redemption_flows ADD COLUMN order_id BIGINT;
CREATE INDEX redemption_flows_order ON redemption_flows (merchant_id, order_id) WHERE order_id IS NOT NULL;

-- +goose Down
DROP INDEX redemption_flows_order;
ALTER TABLE redemption_flows DROP COLUMN order_id;
DROP TABLE redemption_orders;
ALTER TABLE campaigns DROP COLUMN stackable;
