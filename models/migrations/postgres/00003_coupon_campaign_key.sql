-- +goose Up
-- Coupons reference their campaign by (merchant_id, campaign_id) instead of
-- referencing campaigns and merchants separately. PostgreSQL checks a foreign
-- key with one query per inserted row, so issuing a million coupons ran two
-- million checks; now it runs one million, and a coupon can no longer name a
-- campaign of another merchant. The merchant stays checked through the
-- campaign's own reference to merchants.
CREATE UNIQUE INDEX campaigns_merchant_key ON campaigns (merchant_id, id);
DROP INDEX campaigns_merchant;
ALTER TABLE coupons ADD CONSTRAINT coupons_campaign_fkey
    FOREIGN KEY (merchant_id, campaign_id) REFERENCES campaigns (merchant_id, id);
ALTER TABLE coupons DROP CONSTRAINT coupons_campaign_id_fkey;
ALTER TABLE coupons DROP CONSTRAINT coupons_merchant_id_fkey;

-- +goose Down
ALTER TABLE coupons ADD CONSTRAINT coupons_merchant_id_fkey FOREIGN KEY (merchant_id) REFERENCES merchants (id);
ALTER TABLE coupons ADD CONSTRAINT coupons_campaign_id_fkey FOREIGN KEY (campaign_id) REFERENCES campaigns (id);
ALTER TABLE coupons DROP CONSTRAINT coupons_campaign_fkey;
CREATE INDEX campaigns_merchant ON campaigns (merchant_id, id);
DROP INDEX campaigns_merchant_key;
