-- +goose Up
-- Multi-use cards (次卡): a campaign gives each coupon uses_per_coupon uses;
-- a coupon counts its uses (uses_total) and those not yet confirmed
-- (uses_left). uses_total - uses_left is the number of SUCCEEDED redemption
-- flows of the coupon: the ledger is the count, the columns let the taking
-- statement decide. A coupon is REDEEMED exactly when uses_left is 0.
ALTER TABLE campaigns ADD COLUMN uses_per_coupon BIGINT NOT NULL DEFAULT 1
    CHECK (uses_per_coupon BETWEEN 1 AND 100);
ALTER TABLE coupons ADD COLUMN uses_total BIGINT NOT NULL DEFAULT 1;
ALTER TABLE coupons ADD COLUMN uses_left BIGINT NOT NULL DEFAULT 1;
UPDATE coupons SET uses_left = 0 WHERE status IN ('REDEEMED', 'REFUNDED');
ALTER TABLE coupons ADD CONSTRAINT coupons_uses CHECK (uses_left >= 0 AND uses_left <= uses_total);

-- use_no is the use of its coupon a flow took (1 to uses_total); 0 for a
-- rejected flow, which took none.
ALTER TABLE redemption_flows ADD COLUMN use_no BIGINT NOT NULL DEFAULT 0;
UPDATE redemption_flows SET use_no = 1 WHERE status <> 'REJECTED';
-- One live redemption per use of a coupon: the last guard against a use
-- taken twice. A single-use coupon has one use, so this is the old
-- one-live-redemption-per-coupon rule.
DROP INDEX redemption_flows_live;
CREATE UNIQUE INDEX redemption_flows_live ON redemption_flows (merchant_id, coupon_id, use_no)
    WHERE status IN ('PROCESSING', 'SUCCEEDED');

-- Limits at redemption: per customer (over the campaign, and per day) and
-- per store per day, days in the merchant's time zone. Each use counts in
-- redemption_allowances, one row per campaign, scope, subject (customer
-- reference or store id) and day ('' for the campaign-long count), taken by
-- a conditional upsert in the transaction that takes the coupon and given
-- back when the use is released or refunded. A flow remembers whom it
-- counted for (customer_ref) and on which day (allowance_day, '' when it
-- counted nothing).
ALTER TABLE campaigns ADD COLUMN per_customer_daily_limit BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN per_store_daily_limit BIGINT NOT NULL DEFAULT 0;
ALTER TABLE redemption_flows ADD COLUMN customer_ref TEXT;
ALTER TABLE redemption_flows ADD COLUMN allowance_day TEXT NOT NULL DEFAULT '';
CREATE TABLE redemption_allowances (
    merchant_id BIGINT NOT NULL,
    campaign_id BIGINT NOT NULL,
    scope       TEXT   NOT NULL CHECK (scope IN ('CUSTOMER', 'CUSTOMER_DAY', 'STORE_DAY')),
    subject     TEXT   NOT NULL,
    day         TEXT   NOT NULL,
    used        BIGINT NOT NULL CHECK (used >= 0),
    PRIMARY KEY (merchant_id, campaign_id, scope, subject, day)
);

-- Validity rules: each coupon valid for valid_days_after_issue days from its
-- issue (0: until the campaign's valid_to; written into the coupon's
-- valid_to at issue), on the local weekdays of the weekdays bit set
-- (Monday 1 ... Sunday 64; 0: every day) and in the local minutes
-- [window_from, window_to) (equal: all day; from after to crosses midnight).
ALTER TABLE campaigns ADD COLUMN valid_days_after_issue BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN weekdays BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN window_from BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN window_to BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN window_to;
ALTER TABLE campaigns DROP COLUMN window_from;
ALTER TABLE campaigns DROP COLUMN weekdays;
ALTER TABLE campaigns DROP COLUMN valid_days_after_issue;
DROP TABLE redemption_allowances;
ALTER TABLE redemption_flows DROP COLUMN allowance_day;
ALTER TABLE redemption_flows DROP COLUMN customer_ref;
ALTER TABLE campaigns DROP COLUMN per_store_daily_limit;
ALTER TABLE campaigns DROP COLUMN per_customer_daily_limit;
DROP INDEX redemption_flows_live;
CREATE UNIQUE INDEX redemption_flows_live ON redemption_flows (merchant_id, coupon_id)
    WHERE status IN ('PROCESSING', 'SUCCEEDED');
ALTER TABLE redemption_flows DROP COLUMN use_no;
ALTER TABLE coupons DROP CONSTRAINT coupons_uses;
ALTER TABLE coupons DROP COLUMN uses_left;
ALTER TABLE coupons DROP COLUMN uses_total;
ALTER TABLE campaigns DROP COLUMN uses_per_coupon;
