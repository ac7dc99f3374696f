-- +goose Up
-- Every key of a merchant's table leads with merchant_id, so the schema can be
-- distributed by merchant_id (Citus) without changing what it guarantees:
-- a distributed table's primary key and unique constraints must contain the
-- distribution column, and a foreign key between two distributed tables must
-- join on it. The global tables (merchants, api_tokens, job_runs and goose's
-- own) are listed with their reasons in models/citus_test.go and
-- docs/SCALING.md.
--
-- Primary keys become (merchant_id, id). ids still come from one sequence
-- per table, so every id stays unique; a plain index on id keeps the lookups
-- by id alone (transitions, compensation, job bookkeeping) as fast as before.
-- Redemption and refund numbers, and an order's redemption number, become
-- unique per merchant: every lookup of them names the merchant.

-- One statement block: sent to the server at once, not one round trip per
-- ALTER (every test schema runs this migration).
-- +goose StatementBegin
-- 1. Foreign keys onto the single-column keys that are about to change.
ALTER TABLE campaign_stores DROP CONSTRAINT campaign_stores_campaign_id_fkey;
ALTER TABLE campaign_stores DROP CONSTRAINT campaign_stores_store_id_fkey;
ALTER TABLE campaign_customers DROP CONSTRAINT campaign_customers_campaign_id_fkey;
ALTER TABLE api_token_stores DROP CONSTRAINT api_token_stores_store_id_fkey;
ALTER TABLE coupons DROP CONSTRAINT coupons_reissued_from_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_coupon_id_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_reissued_coupon_id_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_store_id_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_redemption_id_fkey;
ALTER TABLE finding_events DROP CONSTRAINT finding_events_finding_id_fkey;

-- 2. Primary keys. stores, campaigns and coupons already hold a unique index
-- on (merchant_id, id), which becomes the primary key.
ALTER TABLE stores DROP CONSTRAINT stores_pkey;
ALTER TABLE stores ADD CONSTRAINT stores_pkey PRIMARY KEY USING INDEX stores_merchant_key;
CREATE INDEX stores_id ON stores (id);
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pkey;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pkey PRIMARY KEY USING INDEX campaigns_merchant_key;
CREATE INDEX campaigns_id ON campaigns (id);
ALTER TABLE coupons DROP CONSTRAINT coupons_pkey;
ALTER TABLE coupons ADD CONSTRAINT coupons_pkey PRIMARY KEY USING INDEX coupons_merchant_key;
CREATE INDEX coupons_id ON coupons (id);

ALTER TABLE redemption_flows DROP CONSTRAINT redemption_flows_pkey;
ALTER TABLE redemption_flows ADD PRIMARY KEY (merchant_id, id);
DROP INDEX redemption_flows_merchant;
CREATE INDEX redemption_flows_id ON redemption_flows (id);
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_pkey;
ALTER TABLE refund_flows ADD PRIMARY KEY (merchant_id, id);
DROP INDEX refund_flows_merchant;
ALTER TABLE audit_events DROP CONSTRAINT audit_events_pkey;
ALTER TABLE audit_events ADD PRIMARY KEY (merchant_id, id);
DROP INDEX audit_events_merchant;
ALTER TABLE findings DROP CONSTRAINT findings_pkey;
ALTER TABLE findings ADD PRIMARY KEY (merchant_id, id);
DROP INDEX findings_merchant;
ALTER TABLE statement_days DROP CONSTRAINT statement_days_pkey;
ALTER TABLE statement_days ADD PRIMARY KEY (merchant_id, id);
CREATE INDEX statement_days_id ON statement_days (id);
ALTER TABLE coupon_transitions DROP CONSTRAINT coupon_transitions_pkey;
ALTER TABLE coupon_transitions ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE orders DROP CONSTRAINT orders_pkey;
ALTER TABLE orders ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE finding_events DROP CONSTRAINT finding_events_pkey;
ALTER TABLE finding_events ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE admin_requests DROP CONSTRAINT admin_requests_pkey;
ALTER TABLE admin_requests ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE statement_adjustments DROP CONSTRAINT statement_adjustments_pkey;
ALTER TABLE statement_adjustments ADD PRIMARY KEY (merchant_id, id);

ALTER TABLE campaign_stores DROP CONSTRAINT campaign_stores_pkey;
ALTER TABLE campaign_stores ADD PRIMARY KEY (merchant_id, campaign_id, store_id);
ALTER TABLE campaign_customers DROP CONSTRAINT campaign_customers_pkey;
ALTER TABLE campaign_customers ADD PRIMARY KEY (merchant_id, campaign_id, customer_ref);

-- A clerk token's store binding carries the token's merchant.
ALTER TABLE api_token_stores ADD COLUMN merchant_id BIGINT;
UPDATE api_token_stores s SET merchant_id = t.merchant_id FROM api_tokens t WHERE t.id = s.token_id;
ALTER TABLE api_token_stores ALTER COLUMN merchant_id SET NOT NULL;
ALTER TABLE api_token_stores DROP CONSTRAINT api_token_stores_pkey;
ALTER TABLE api_token_stores ADD PRIMARY KEY (merchant_id, token_id, store_id);

-- 3. Unique numbers, per merchant.
ALTER TABLE redemption_flows DROP CONSTRAINT redemption_flows_redeem_no_key;
ALTER TABLE redemption_flows ADD CONSTRAINT redemption_flows_redeem_no_key UNIQUE (merchant_id, redeem_no);
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_refund_no_key;
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_refund_no_key UNIQUE (merchant_id, refund_no);
ALTER TABLE orders DROP CONSTRAINT orders_redeem_no_key;
ALTER TABLE orders ADD CONSTRAINT orders_redeem_no_key UNIQUE (merchant_id, redeem_no);
ALTER TABLE coupon_transitions DROP CONSTRAINT coupon_transitions_coupon_id_version_after_key;
ALTER TABLE coupon_transitions ADD CONSTRAINT coupon_transitions_coupon_id_version_after_key
    UNIQUE (merchant_id, coupon_id, version_after);

-- 4. Foreign keys again, through the merchant.
ALTER TABLE campaign_stores ADD CONSTRAINT campaign_stores_campaign_fkey
    FOREIGN KEY (merchant_id, campaign_id) REFERENCES campaigns (merchant_id, id);
ALTER TABLE campaign_stores ADD CONSTRAINT campaign_stores_store_fkey
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id);
ALTER TABLE campaign_customers ADD CONSTRAINT campaign_customers_campaign_fkey
    FOREIGN KEY (merchant_id, campaign_id) REFERENCES campaigns (merchant_id, id);
ALTER TABLE api_token_stores ADD CONSTRAINT api_token_stores_store_fkey
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id);
ALTER TABLE coupons ADD CONSTRAINT coupons_reissued_from_fkey
    FOREIGN KEY (merchant_id, reissued_from) REFERENCES coupons (merchant_id, id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_coupon_fkey
    FOREIGN KEY (merchant_id, coupon_id) REFERENCES coupons (merchant_id, id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_reissued_coupon_fkey
    FOREIGN KEY (merchant_id, reissued_coupon_id) REFERENCES coupons (merchant_id, id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_store_fkey
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_redemption_fkey
    FOREIGN KEY (merchant_id, redemption_id) REFERENCES redemption_flows (merchant_id, id);
ALTER TABLE finding_events ADD CONSTRAINT finding_events_finding_fkey
    FOREIGN KEY (merchant_id, finding_id) REFERENCES findings (merchant_id, id);
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
ALTER TABLE finding_events DROP CONSTRAINT finding_events_finding_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_redemption_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_store_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_reissued_coupon_fkey;
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_coupon_fkey;
ALTER TABLE coupons DROP CONSTRAINT coupons_reissued_from_fkey;
ALTER TABLE api_token_stores DROP CONSTRAINT api_token_stores_store_fkey;
ALTER TABLE campaign_customers DROP CONSTRAINT campaign_customers_campaign_fkey;
ALTER TABLE campaign_stores DROP CONSTRAINT campaign_stores_store_fkey;
ALTER TABLE campaign_stores DROP CONSTRAINT campaign_stores_campaign_fkey;

ALTER TABLE coupon_transitions DROP CONSTRAINT coupon_transitions_coupon_id_version_after_key;
ALTER TABLE coupon_transitions ADD CONSTRAINT coupon_transitions_coupon_id_version_after_key UNIQUE (coupon_id, version_after);
ALTER TABLE orders DROP CONSTRAINT orders_redeem_no_key;
ALTER TABLE orders ADD CONSTRAINT orders_redeem_no_key UNIQUE (redeem_no);
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_refund_no_key;
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_refund_no_key UNIQUE (refund_no);
ALTER TABLE redemption_flows DROP CONSTRAINT redemption_flows_redeem_no_key;
ALTER TABLE redemption_flows ADD CONSTRAINT redemption_flows_redeem_no_key UNIQUE (redeem_no);

ALTER TABLE api_token_stores DROP CONSTRAINT api_token_stores_pkey;
ALTER TABLE api_token_stores ADD PRIMARY KEY (token_id, store_id);
ALTER TABLE api_token_stores DROP COLUMN merchant_id;
ALTER TABLE campaign_customers DROP CONSTRAINT campaign_customers_pkey;
ALTER TABLE campaign_customers ADD PRIMARY KEY (campaign_id, customer_ref);
ALTER TABLE campaign_stores DROP CONSTRAINT campaign_stores_pkey;
ALTER TABLE campaign_stores ADD PRIMARY KEY (campaign_id, store_id);

ALTER TABLE statement_adjustments DROP CONSTRAINT statement_adjustments_pkey;
ALTER TABLE statement_adjustments ADD PRIMARY KEY (id);
ALTER TABLE admin_requests DROP CONSTRAINT admin_requests_pkey;
ALTER TABLE admin_requests ADD PRIMARY KEY (id);
ALTER TABLE finding_events DROP CONSTRAINT finding_events_pkey;
ALTER TABLE finding_events ADD PRIMARY KEY (id);
ALTER TABLE orders DROP CONSTRAINT orders_pkey;
ALTER TABLE orders ADD PRIMARY KEY (id);
ALTER TABLE coupon_transitions DROP CONSTRAINT coupon_transitions_pkey;
ALTER TABLE coupon_transitions ADD PRIMARY KEY (id);
DROP INDEX statement_days_id;
ALTER TABLE statement_days DROP CONSTRAINT statement_days_pkey;
ALTER TABLE statement_days ADD PRIMARY KEY (id);
CREATE INDEX findings_merchant ON findings (merchant_id, id);
ALTER TABLE findings DROP CONSTRAINT findings_pkey;
ALTER TABLE findings ADD PRIMARY KEY (id);
CREATE INDEX audit_events_merchant ON audit_events (merchant_id, id);
ALTER TABLE audit_events DROP CONSTRAINT audit_events_pkey;
ALTER TABLE audit_events ADD PRIMARY KEY (id);
CREATE INDEX refund_flows_merchant ON refund_flows (merchant_id, id);
ALTER TABLE refund_flows DROP CONSTRAINT refund_flows_pkey;
ALTER TABLE refund_flows ADD PRIMARY KEY (id);
DROP INDEX redemption_flows_id;
CREATE INDEX redemption_flows_merchant ON redemption_flows (merchant_id, id);
ALTER TABLE redemption_flows DROP CONSTRAINT redemption_flows_pkey;
ALTER TABLE redemption_flows ADD PRIMARY KEY (id);

-- The (merchant_id, id) keys of stores, campaigns and coupons go back to
-- being unique indexes beside a primary key on id.
ALTER TABLE redemption_flows DROP CONSTRAINT redemption_flows_coupon_fkey;
ALTER TABLE redemption_flows DROP CONSTRAINT redemption_flows_store_fkey;
ALTER TABLE coupon_transitions DROP CONSTRAINT coupon_transitions_coupon_fkey;
ALTER TABLE coupons DROP CONSTRAINT coupons_campaign_fkey;
DROP INDEX coupons_id;
ALTER TABLE coupons DROP CONSTRAINT coupons_pkey;
ALTER TABLE coupons ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX coupons_merchant_key ON coupons (merchant_id, id);
DROP INDEX campaigns_id;
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pkey;
ALTER TABLE campaigns ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX campaigns_merchant_key ON campaigns (merchant_id, id);
DROP INDEX stores_id;
ALTER TABLE stores DROP CONSTRAINT stores_pkey;
ALTER TABLE stores ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX stores_merchant_key ON stores (merchant_id, id);
ALTER TABLE coupons ADD CONSTRAINT coupons_campaign_fkey
    FOREIGN KEY (merchant_id, campaign_id) REFERENCES campaigns (merchant_id, id);
ALTER TABLE coupon_transitions ADD CONSTRAINT coupon_transitions_coupon_fkey
    FOREIGN KEY (merchant_id, coupon_id) REFERENCES coupons (merchant_id, id);
ALTER TABLE redemption_flows ADD CONSTRAINT redemption_flows_store_fkey
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id);
ALTER TABLE redemption_flows ADD CONSTRAINT redemption_flows_coupon_fkey
    FOREIGN KEY (merchant_id, coupon_id) REFERENCES coupons (merchant_id, id);

ALTER TABLE finding_events ADD CONSTRAINT finding_events_finding_id_fkey FOREIGN KEY (finding_id) REFERENCES findings (id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_redemption_id_fkey FOREIGN KEY (redemption_id) REFERENCES redemption_flows (id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_reissued_coupon_id_fkey FOREIGN KEY (reissued_coupon_id) REFERENCES coupons (id);
ALTER TABLE refund_flows ADD CONSTRAINT refund_flows_coupon_id_fkey FOREIGN KEY (coupon_id) REFERENCES coupons (id);
ALTER TABLE coupons ADD CONSTRAINT coupons_reissued_from_fkey FOREIGN KEY (reissued_from) REFERENCES coupons (id);
ALTER TABLE api_token_stores ADD CONSTRAINT api_token_stores_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id);
ALTER TABLE campaign_customers ADD CONSTRAINT campaign_customers_campaign_id_fkey FOREIGN KEY (campaign_id) REFERENCES campaigns (id);
ALTER TABLE campaign_stores ADD CONSTRAINT campaign_stores_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id);
ALTER TABLE campaign_stores ADD CONSTRAINT campaign_stores_campaign_id_fkey FOREIGN KEY (campaign_id) REFERENCES campaigns (id);
-- +goose StatementEnd
