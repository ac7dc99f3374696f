-- +goose Up
-- The PostgreSQL schema drops the only index on coupons.status, so a coupon
-- transition writes no index entry, and makes (merchant_id, id) a key of
-- coupons and stores for the ledger's references. SQLite gets the same
-- indexes, so lists filtered by status are planned alike; its ledger keeps its
-- single-column references (changing a foreign key here means rebuilding the
-- table, and SQLite checks them in process without row locks).
DROP INDEX coupons_status;
CREATE UNIQUE INDEX coupons_merchant_key ON coupons (merchant_id, id);
CREATE UNIQUE INDEX stores_merchant_key ON stores (merchant_id, id);

-- +goose Down
DROP INDEX stores_merchant_key;
DROP INDEX coupons_merchant_key;
CREATE INDEX coupons_status ON coupons (merchant_id, status, id);
