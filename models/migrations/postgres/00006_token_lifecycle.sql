-- +goose Up
-- Token lifecycle: tokens may expire, record when they were last used, and
-- can be created idempotently under a client's request id.
--
-- last_used_at is written at most once a minute per token, in the background
-- (services.Tokens), never on the authentication path itself.
--
-- redemption_flows.operator_id and refund_flows.operator_id name the token a
-- flow was made with. They stay without a foreign key on purpose: a foreign
-- key is checked by locking the referenced row (FOR KEY SHARE), and every
-- redemption of a till would then lock that till's token row (00004 removed
-- the same lock on merchants). Tokens are never deleted, so the reference
-- cannot dangle.
ALTER TABLE api_tokens ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE api_tokens ADD COLUMN last_used_at TIMESTAMPTZ;
ALTER TABLE api_tokens ADD COLUMN request_id TEXT;
ALTER TABLE api_tokens ADD COLUMN fingerprint TEXT;
-- One token per request id and merchant: concurrent repeats of a createToken
-- create one token, whatever reaches the database first.
CREATE UNIQUE INDEX api_tokens_request ON api_tokens (merchant_id, request_id) WHERE request_id IS NOT NULL;
CREATE INDEX api_tokens_merchant ON api_tokens (merchant_id, id);

-- +goose Down
DROP INDEX api_tokens_merchant;
DROP INDEX api_tokens_request;
ALTER TABLE api_tokens DROP COLUMN fingerprint;
ALTER TABLE api_tokens DROP COLUMN request_id;
ALTER TABLE api_tokens DROP COLUMN last_used_at;
ALTER TABLE api_tokens DROP COLUMN expires_at;
