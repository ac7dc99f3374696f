-- +goose Up
-- The daily statement stored per merchant, local day (YYYY-MM-DD in the
-- merchant's zone), store and campaign. store_id 0 holds what happens to
-- coupons at no store (expiries, voids); the row with store_id 0 and
-- campaign_id 0 is the day's own row: it exists once the day is stored and
-- carries the day's closed_at, which freezes every line of the day.
CREATE TABLE statement_days (
    id              BIGSERIAL PRIMARY KEY,
    merchant_id     BIGINT      NOT NULL REFERENCES merchants (id),
    day             TEXT        NOT NULL,
    store_id        BIGINT      NOT NULL DEFAULT 0,
    campaign_id     BIGINT      NOT NULL DEFAULT 0,
    redeemed_count  BIGINT      NOT NULL DEFAULT 0,
    redeemed_amount BIGINT      NOT NULL DEFAULT 0,
    refunded_count  BIGINT      NOT NULL DEFAULT 0,
    refunded_amount BIGINT      NOT NULL DEFAULT 0,
    expired_count   BIGINT      NOT NULL DEFAULT 0,
    expired_value   BIGINT      NOT NULL DEFAULT 0,
    voided_count    BIGINT      NOT NULL DEFAULT 0,
    closed_at       TIMESTAMPTZ,
    computed_at     TIMESTAMPTZ NOT NULL,
    UNIQUE (merchant_id, day, store_id, campaign_id)
);

-- Business that reached a closed day after it was closed, booked on the day
-- it was found (day) against the closed day, one row per figure (kind).
CREATE TABLE statement_adjustments (
    id          BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT      NOT NULL REFERENCES merchants (id),
    day         TEXT        NOT NULL,
    closed_day  TEXT        NOT NULL,
    store_id    BIGINT      NOT NULL DEFAULT 0,
    campaign_id BIGINT      NOT NULL,
    kind        TEXT        NOT NULL CHECK (kind IN ('REDEEMED', 'REFUNDED', 'EXPIRED', 'VOIDED')),
    count       BIGINT      NOT NULL,
    amount      BIGINT      NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (merchant_id, closed_day, store_id, campaign_id, kind, day)
);
CREATE INDEX statement_adjustments_day ON statement_adjustments (merchant_id, day);

-- +goose Down
DROP TABLE statement_adjustments;
DROP TABLE statement_days;
