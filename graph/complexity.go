package graph

import (
	"time"

	"coupond/graph/generated"
	"coupond/graph/model"
)

// pageCost is the complexity of a paged list: its rows times what each row
// selects, so a query cannot multiply nested lists past the limit.
func pageCost(child int, first *int64) int {
	n := int64(20)
	if first != nil && *first > 0 {
		n = min(*first, 100)
	}
	return 1 + int(n)*max(child, 1)
}

// nestedListCost estimates an unpaged relation list (a coupon's redemptions or
// transitions), which holds a handful of rows.
func nestedListCost(child int) int { return 1 + 5*max(child, 1) }

// setComplexity prices the schema's lists; every other field costs 1.
func setComplexity(c *generated.ComplexityRoot) {
	c.Query.Coupons = func(child int, _ *model.CouponFilter, first *int64, _ *string) int { return pageCost(child, first) }
	c.Query.Redemptions = func(child int, _ *model.RedemptionFilter, first *int64, _ *string) int {
		return pageCost(child, first)
	}
	c.Query.Campaigns = func(child int, _ *time.Time, first *int64, _ *string) int { return pageCost(child, first) }
	c.Query.Stores = func(child int, first *int64, _ *string) int { return pageCost(child, first) }
	c.Query.WebhookDeliveries = func(child int, _ *model.WebhookDeliveryFilter, first *int64, _ *string) int {
		return pageCost(child, first)
	}
	c.Query.Events = func(child int, _ *model.EventFilter, first *int64, _ *string) int { return pageCost(child, first) }
	c.Query.AuditEvents = func(child int, _ *model.AuditEventFilter, first *int64, _ *string) int {
		return pageCost(child, first)
	}
	c.Coupon.Redemptions = nestedListCost
	c.Coupon.Refunds = nestedListCost
	c.Coupon.Transitions = nestedListCost
	c.Campaign.Stores = nestedListCost
	c.Finding.History = nestedListCost
}
