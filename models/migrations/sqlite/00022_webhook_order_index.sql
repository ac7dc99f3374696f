-- +goose Up
-- The claim's test for an earlier PENDING event of the same coupon
-- (models.ClaimDeliveries) states this index's predicate word for word, as
-- on PostgreSQL, where a predicate other than that of
-- webhook_deliveries_endpoint_due keeps the planner from reading that index
-- for the test instead (see the PostgreSQL migration of the same number).
CREATE INDEX webhook_deliveries_coupon_order
    ON webhook_deliveries (merchant_id, endpoint_id, coupon_id, event_id)
    WHERE status NOT IN ('DELIVERED', 'FAILED');
DROP INDEX webhook_deliveries_order;

-- +goose Down
CREATE INDEX webhook_deliveries_order
    ON webhook_deliveries (merchant_id, endpoint_id, coupon_id, event_id) WHERE status = 'PENDING';
DROP INDEX webhook_deliveries_coupon_order;
