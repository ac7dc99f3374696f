-- +goose Up
-- The PostgreSQL schema makes (merchant_id, id) a key of campaigns so coupons
-- can reference their campaign by it. SQLite gets the same key; its coupons
-- keep their two single-column references, because changing a foreign key
-- here means rebuilding the coupons table, and SQLite's in-process checks do
-- not make issuance slow.
CREATE UNIQUE INDEX campaigns_merchant_key ON campaigns (merchant_id, id);
DROP INDEX campaigns_merchant;

-- +goose Down
CREATE INDEX campaigns_merchant ON campaigns (merchant_id, id);
DROP INDEX campaigns_merchant_key;
