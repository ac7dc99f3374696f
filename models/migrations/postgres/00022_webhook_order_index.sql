-- +goose NO TRANSACTION
-- +goose Up
-- The claim's test for an earlier PENDING event of the same coupon
-- (models.ClaimDeliveries) reads this index, whose predicate it states word
-- for word. Its predicate is not the status = 'PENDING' of
-- webhook_deliveries_endpoint_due on purpose: the old index of the order
-- (webhook_deliveries_order) had that predicate, so the planner could read
-- webhook_deliveries_endpoint_due for the test instead, and did whenever
-- the statistics said few deliveries were PENDING (as they do between
-- backlogs): every candidate then read all of its endpoint's PENDING
-- entries, and with a backlog of a few thousand each claim took seconds.
-- The CHECK on status makes both predicates hold for the same rows.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_coupon_order
    ON webhook_deliveries (merchant_id, endpoint_id, coupon_id, event_id)
    WHERE status NOT IN ('DELIVERED', 'FAILED');
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_order;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_order
    ON webhook_deliveries (merchant_id, endpoint_id, coupon_id, event_id) WHERE status = 'PENDING';
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_coupon_order;
