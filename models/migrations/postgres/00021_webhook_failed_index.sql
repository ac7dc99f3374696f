-- +goose Up
-- /metrics counts the deliveries given up (services.Webhooks.Metrics) from
-- this index, as it counts the PENDING ones from
-- webhook_deliveries_endpoint_due, instead of reading the whole table,
-- which grows with every delivery. Deliveries are given up rarely, so the
-- index costs the delivery path next to nothing.
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (merchant_id, endpoint_id) WHERE status = 'FAILED';

-- +goose Down
DROP INDEX webhook_deliveries_failed;
