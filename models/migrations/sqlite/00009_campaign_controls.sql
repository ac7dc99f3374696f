-- +goose Up
-- Campaigns change under optimistic locking (version) and can be paused or
-- ended (state). A paused campaign issues nothing and its coupons are not
-- taken; an ended one has its validity cut to the moment it ended.
ALTER TABLE campaigns ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN state TEXT NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'PAUSED', 'ENDED'));

-- The expiry job finds coupons past their validity by valid_to. No transition
-- writes valid_to, so coupon transitions stay heap-only updates.
CREATE INDEX coupons_valid_to ON coupons (valid_to, id);

-- Idempotent admin calls: the first result of a request id, per merchant and
-- operation, written in the transaction of the change it describes.
CREATE TABLE admin_requests (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT      NOT NULL REFERENCES merchants (id),
    operation   TEXT        NOT NULL,
    request_id  TEXT        NOT NULL,
    fingerprint TEXT        NOT NULL,
    result      TEXT        NOT NULL,
    created_at  DATETIME    NOT NULL,
    UNIQUE (merchant_id, operation, request_id)
);

-- +goose Down
DROP TABLE admin_requests;
DROP INDEX coupons_valid_to;
ALTER TABLE campaigns DROP COLUMN state;
ALTER TABLE campaigns DROP COLUMN version;
