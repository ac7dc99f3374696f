-- +goose Up
-- Every reader of due deliveries names its endpoint and reads
-- webhook_deliveries_endpoint_due (00019); the index of all due deliveries by
-- time alone was read by none of them, and each new delivery paid for its
-- entry on the redemption's statement.
DROP INDEX webhook_deliveries_due;

-- +goose Down
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
