-- +goose Up
-- Multi-use cards (次卡): see the PostgreSQL migration of the same number.
-- SQLite checks the CHECK constraints of added columns against later writes.
ALTER TABLE campaigns ADD COLUMN uses_per_coupon BIGINT NOT NULL DEFAULT 1
    CHECK (uses_per_coupon BETWEEN 1 AND 100);
ALTER TABLE coupons ADD COLUMN uses_total BIGINT NOT NULL DEFAULT 1;
ALTER TABLE coupons ADD COLUMN uses_left BIGINT NOT NULL DEFAULT 1 CHECK (uses_left >= 0);
UPDATE coupons SET uses_left = 0 WHERE status IN ('REDEEMED', 'REFUNDED');

ALTER TABLE redemption_flows ADD COLUMN use_no BIGINT NOT NULL DEFAULT 0;
UPDATE redemption_flows SET use_no = 1 WHERE status <> 'REJECTED';
DROP INDEX redemption_flows_live;
CREATE UNIQUE INDEX redemption_flows_live ON redemption_flows (merchant_id, coupon_id, use_no)
    WHERE status IN ('PROCESSING', 'SUCCEEDED');

-- +goose Down
DROP INDEX redemption_flows_live;
CREATE UNIQUE INDEX redemption_flows_live ON redemption_flows (merchant_id, coupon_id)
    WHERE status IN ('PROCESSING', 'SUCCEEDED');
ALTER TABLE redemption_flows DROP COLUMN use_no;
ALTER TABLE coupons DROP COLUMN uses_left;
ALTER TABLE coupons DROP COLUMN uses_total;
ALTER TABLE campaigns DROP COLUMN uses_per_coupon;
