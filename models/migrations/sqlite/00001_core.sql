-- +goose Up
CREATE TABLE merchants (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    code        TEXT        NOT NULL UNIQUE,
    name        TEXT        NOT NULL,
    timezone    TEXT        NOT NULL,
    created_at  DATETIME NOT NULL
);

CREATE TABLE stores (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT      NOT NULL REFERENCES merchants (id),
    code        TEXT        NOT NULL,
    name        TEXT        NOT NULL,
    created_at  DATETIME NOT NULL,
    UNIQUE (merchant_id, code)
);

CREATE TABLE campaigns (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id           BIGINT      NOT NULL REFERENCES merchants (id),
    name                  TEXT        NOT NULL,
    type                  TEXT        NOT NULL CHECK (type IN ('CASH', 'DISCOUNT', 'EXCHANGE')),
    value                 BIGINT      NOT NULL,
    max_discount          BIGINT      NOT NULL DEFAULT 0,
    min_spend             BIGINT      NOT NULL DEFAULT 0,
    valid_from            DATETIME NOT NULL,
    valid_to              DATETIME NOT NULL,
    all_stores            BOOLEAN     NOT NULL,
    total_quantity        BIGINT      NOT NULL,
    issued                BIGINT      NOT NULL DEFAULT 0,
    reissued              BIGINT      NOT NULL DEFAULT 0,
    per_customer_limit    BIGINT      NOT NULL DEFAULT 0,
    refund_window_minutes BIGINT      NOT NULL,
    created_at            DATETIME NOT NULL,
    CHECK (issued <= total_quantity)
);
CREATE INDEX campaigns_merchant ON campaigns (merchant_id, id);

CREATE TABLE campaign_stores (
    merchant_id BIGINT NOT NULL,
    campaign_id BIGINT NOT NULL REFERENCES campaigns (id),
    store_id    BIGINT NOT NULL REFERENCES stores (id),
    PRIMARY KEY (campaign_id, store_id)
);

CREATE TABLE campaign_customers (
    merchant_id  BIGINT NOT NULL,
    campaign_id  BIGINT NOT NULL REFERENCES campaigns (id),
    customer_ref TEXT   NOT NULL,
    issued       BIGINT NOT NULL,
    PRIMARY KEY (campaign_id, customer_ref)
);

CREATE TABLE coupons (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id   BIGINT      NOT NULL REFERENCES merchants (id),
    campaign_id   BIGINT      NOT NULL REFERENCES campaigns (id),
    code          TEXT        NOT NULL,
    status        TEXT        NOT NULL CHECK (status IN ('UNUSED', 'REDEEMING', 'REDEEMED', 'REFUNDED', 'EXPIRED')),
    version       BIGINT      NOT NULL DEFAULT 0,
    valid_from    DATETIME NOT NULL,
    valid_to      DATETIME NOT NULL,
    customer_ref  TEXT,
    redeem_no     TEXT,
    reissued_from BIGINT REFERENCES coupons (id),
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL,
    UNIQUE (merchant_id, code)
);
CREATE INDEX coupons_campaign ON coupons (merchant_id, campaign_id, id);
CREATE INDEX coupons_status ON coupons (merchant_id, status, id);

CREATE TABLE redemption_flows (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id     BIGINT      NOT NULL REFERENCES merchants (id),
    redeem_no       TEXT        NOT NULL UNIQUE,
    operation       TEXT        NOT NULL CHECK (operation IN ('REDEEM', 'RESERVE')),
    request_id      TEXT        NOT NULL,
    fingerprint     TEXT        NOT NULL,
    coupon_id       BIGINT      NOT NULL REFERENCES coupons (id),
    store_id        BIGINT      NOT NULL REFERENCES stores (id),
    operator_id     BIGINT,
    status          TEXT        NOT NULL CHECK (status IN ('PROCESSING', 'SUCCEEDED', 'REJECTED', 'RELEASED')),
    reject_reason   TEXT,
    release_reason  TEXT,
    order_amount    BIGINT      NOT NULL,
    discount_amount BIGINT      NOT NULL,
    order_ref       TEXT,
    hold_until      DATETIME,
    attempts        BIGINT      NOT NULL DEFAULT 0,
    version         BIGINT      NOT NULL DEFAULT 0,
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL,
    finished_at     DATETIME,
    UNIQUE (merchant_id, operation, request_id)
);
-- One live redemption per coupon: the last guard against a double redemption.
CREATE UNIQUE INDEX redemption_flows_live ON redemption_flows (merchant_id, coupon_id)
    WHERE status IN ('PROCESSING', 'SUCCEEDED');
CREATE INDEX redemption_flows_merchant ON redemption_flows (merchant_id, id);
CREATE INDEX redemption_flows_coupon ON redemption_flows (coupon_id, id);
CREATE INDEX redemption_flows_processing ON redemption_flows (created_at) WHERE status = 'PROCESSING';

CREATE TABLE refund_flows (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id        BIGINT      NOT NULL REFERENCES merchants (id),
    refund_no          TEXT        NOT NULL UNIQUE,
    request_id         TEXT        NOT NULL,
    fingerprint        TEXT        NOT NULL,
    redemption_id      BIGINT      NOT NULL REFERENCES redemption_flows (id),
    redeem_no          TEXT        NOT NULL,
    coupon_id          BIGINT      NOT NULL REFERENCES coupons (id),
    store_id           BIGINT      NOT NULL REFERENCES stores (id),
    operator_id        BIGINT,
    status             TEXT        NOT NULL CHECK (status IN ('SUCCEEDED')),
    reason             TEXT        NOT NULL,
    amount             BIGINT      NOT NULL,
    reissue            BOOLEAN     NOT NULL,
    reissued_coupon_id BIGINT REFERENCES coupons (id),
    created_at         DATETIME NOT NULL,
    finished_at        DATETIME,
    UNIQUE (merchant_id, request_id)
);
CREATE UNIQUE INDEX refund_flows_one_per_redemption ON refund_flows (merchant_id, redemption_id)
    WHERE status = 'SUCCEEDED';
CREATE INDEX refund_flows_merchant ON refund_flows (merchant_id, id);
CREATE INDEX refund_flows_coupon ON refund_flows (coupon_id, id);

CREATE TABLE coupon_transitions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id   BIGINT      NOT NULL,
    coupon_id     BIGINT      NOT NULL REFERENCES coupons (id),
    from_status   TEXT        NOT NULL,
    to_status     TEXT        NOT NULL,
    version_after BIGINT      NOT NULL,
    flow_no       TEXT        NOT NULL,
    actor         TEXT        NOT NULL,
    store_id      BIGINT,
    created_at    DATETIME NOT NULL,
    UNIQUE (coupon_id, version_after)
);

CREATE TABLE orders (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id  BIGINT      NOT NULL,
    redeem_no    TEXT        NOT NULL UNIQUE,
    coupon_id    BIGINT,
    store_id     BIGINT,
    amount       BIGINT      NOT NULL,
    status       TEXT        NOT NULL CHECK (status IN ('CREATED', 'CANCELLED')),
    created_at   DATETIME NOT NULL,
    cancelled_at DATETIME
);

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id  BIGINT      NOT NULL REFERENCES merchants (id),
    name         TEXT        NOT NULL,
    role         TEXT        NOT NULL CHECK (role IN ('ADMIN', 'CLERK', 'FINANCE')),
    token_hash   TEXT        NOT NULL UNIQUE,
    created_at   DATETIME NOT NULL,
    revoked_at   DATETIME
);

CREATE TABLE api_token_stores (
    token_id BIGINT NOT NULL REFERENCES api_tokens (id),
    store_id BIGINT NOT NULL REFERENCES stores (id),
    PRIMARY KEY (token_id, store_id)
);

CREATE TABLE audit_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT      NOT NULL,
    actor       TEXT        NOT NULL,
    action      TEXT        NOT NULL,
    target      TEXT        NOT NULL,
    detail      TEXT        NOT NULL,
    request_id  TEXT,
    created_at  DATETIME NOT NULL
);
CREATE INDEX audit_events_merchant ON audit_events (merchant_id, id);

-- +goose Down
DROP TABLE audit_events;
DROP TABLE api_token_stores;
DROP TABLE api_tokens;
DROP TABLE orders;
DROP TABLE coupon_transitions;
DROP TABLE refund_flows;
DROP TABLE redemption_flows;
DROP TABLE coupons;
DROP TABLE campaign_customers;
DROP TABLE campaign_stores;
DROP TABLE campaigns;
DROP TABLE stores;
DROP TABLE merchants;
