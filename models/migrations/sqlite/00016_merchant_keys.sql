-- +goose Up
-- PostgreSQL's 00016 makes every key of a merchant's table lead with
-- merchant_id (see that file). SQLite keeps its keys; it gains what the code
-- now names: the merchant of a clerk token's store binding, and the
-- per-merchant keys that ON CONFLICT clauses name.
ALTER TABLE api_token_stores ADD COLUMN merchant_id BIGINT NOT NULL DEFAULT 0;
UPDATE api_token_stores SET merchant_id = (SELECT merchant_id FROM api_tokens WHERE api_tokens.id = api_token_stores.token_id);
CREATE UNIQUE INDEX orders_merchant_redeem_no ON orders (merchant_id, redeem_no);
CREATE UNIQUE INDEX campaign_customers_merchant_key ON campaign_customers (merchant_id, campaign_id, customer_ref);

-- +goose Down
DROP INDEX campaign_customers_merchant_key;
DROP INDEX orders_merchant_redeem_no;
ALTER TABLE api_token_stores DROP COLUMN merchant_id;
