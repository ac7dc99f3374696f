-- +goose Up
-- Several codes on one order (redeemCoupons). A campaign says whether its
-- coupons stack with others on one order; at most one coupon of a
-- non-stackable campaign goes on an order.
ALTER TABLE campaigns ADD COLUMN stackable BOOLEAN NOT NULL DEFAULT FALSE;

-- redemption_orders holds one multi-code request: its request id is the
-- idempotency anchor (the unique key decides between concurrent copies),
-- its status the one decision for every flow of the order (PROCESSING ->
-- SUCCEEDED or RELEASED by one conditional update, REJECTED from the start),
-- and order_no, the redemption number of its first flow, is the key of the
-- one business order the fulfillment adapter makes for the whole set.
-- verdicts is a rejection's answer (every code's reasons, JSON) for replays.
-- refunded counts the flows refunded so far: the refund that makes it
-- code_count cancels the order.
-- +goose StatementBegin
CREATE TABLE redemption_orders (
    id              BIGSERIAL,
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
    fenced_at       TIMESTAMPTZ,
    version         BIGINT      NOT NULL DEFAULT 0,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    finished_at     TIMESTAMPTZ,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (merchant_id, request_id),
    CHECK (refunded >= 0 AND refunded <= code_count)
);
CREATE INDEX redemption_orders_id ON redemption_orders (id);

-- A flow of a multi-code order names its order; NULL for every other flow.
ALTER TABLE redemption_flows ADD COLUMN order_id BIGINT;
CREATE INDEX redemption_flows_order ON redemption_flows (merchant_id, order_id) WHERE order_id IS NOT NULL;
-- +goose StatementEnd

-- +goose Down
DROP INDEX redemption_flows_order;
ALTER TABLE redemption_flows DROP COLUMN order_id;
DROP TABLE redemption_orders;
ALTER TABLE campaigns DROP COLUMN stackable;
