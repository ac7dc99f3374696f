-- +goose Up
-- The delivery worker claims each endpoint's due deliveries in one statement,
-- oldest due first (models.ClaimDeliveries), and looks for endpoints with
-- due work (models.DueEndpoints): both read this index in its order instead
-- of sorting an endpoint's whole backlog.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (merchant_id, endpoint_id, next_attempt_at, event_id)
    WHERE status = 'PENDING';

-- +goose Down
DROP INDEX webhook_deliveries_endpoint_due;
