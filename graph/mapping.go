package graph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"coupond/graph/model"
	"coupond/models"
	"coupond/services"
)

func pageArgs(first *int64, after *string) services.PageArgs {
	var p services.PageArgs
	if first != nil {
		// 0 and negatives must fail validation, not mean "default".
		p.First = int(min(max(*first, -1), services.MaxPageSize+1))
		if p.First == 0 {
			p.First = -1
		}
	}
	if after != nil {
		p.After = *after
	}
	return p
}

func pageInfo[T any](page services.Page[T], id func(*T) int64) *model.PageInfo {
	pi := &model.PageInfo{HasNextPage: page.HasNextPage}
	if n := len(page.Items); n > 0 {
		c := services.EncodeCursor(id(&page.Items[n-1]))
		pi.EndCursor = &c
	}
	return pi
}

// edges maps a page's rows to GraphQL edges.
func edges[T any, E any](page services.Page[T], id func(*T) int64, edge func(cursor string, node *T) E) []E {
	out := make([]E, len(page.Items))
	for i := range page.Items {
		out[i] = edge(services.EncodeCursor(id(&page.Items[i])), &page.Items[i])
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func couponID(c *models.Coupon) int64         { return c.ID }
func storeID(s *models.Store) int64           { return s.ID }
func campaignID(c *models.Campaign) int64     { return c.ID }
func flowID(f *models.RedemptionFlow) int64   { return f.ID }
func findingID(f *models.Finding) int64       { return f.ID }
func jobRunID(j *services.JobRun) int64       { return j.ID }
func tokenID(t *models.APIToken) int64        { return t.ID }
func auditEventID(e *models.AuditEvent) int64 { return e.ID }

// jobCounts turns a run's counts, a JSON object of named integers, into a list
// sorted by name.
func jobCounts(raw string) ([]*model.JobCount, error) {
	if raw == "" {
		return []*model.JobCount{}, nil
	}
	var m map[string]int64
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("job run counts %q: %w", raw, err)
	}
	out := make([]*model.JobCount, 0, len(m))
	for k, v := range m {
		out = append(out, &model.JobCount{Name: k, Value: v})
	}
	slices.SortFunc(out, func(a, b *model.JobCount) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func redeemInput(in model.RedeemCouponInput) services.RedeemInput {
	return services.RedeemInput{Code: in.Code, StoreID: in.StoreID, RequestID: in.RequestID, OrderAmount: in.OrderAmount,
		CustomerRef: deref(in.CustomerRef)}
}

// timeText is t as the services' from/to text (RFC 3339), or empty.
func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// weekdayNames pairs the schema's weekdays with Go's.
var weekdayNames = []struct {
	name model.Weekday
	day  time.Weekday
}{
	{model.WeekdayMonday, time.Monday}, {model.WeekdayTuesday, time.Tuesday}, {model.WeekdayWednesday, time.Wednesday},
	{model.WeekdayThursday, time.Thursday}, {model.WeekdayFriday, time.Friday}, {model.WeekdaySaturday, time.Saturday},
	{model.WeekdaySunday, time.Sunday},
}

// weekdaysIn maps the schema's weekdays to Go's, in the order given.
func weekdaysIn(in []model.Weekday) []time.Weekday {
	out := make([]time.Weekday, 0, len(in))
	for _, w := range in {
		for _, n := range weekdayNames {
			if n.name == w {
				out = append(out, n.day)
			}
		}
	}
	return out
}

// weekdaysOf lists the weekdays of a campaign's weekday bits, Monday first.
func weekdaysOf(bits int64) []model.Weekday {
	out := []model.Weekday{}
	for _, n := range weekdayNames {
		if bits&models.WeekdayBit(n.day) != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// rejectReasons are reject reasons as the schema's enum.
func rejectReasons(reasons []string) []model.RejectReason {
	out := make([]model.RejectReason, len(reasons))
	for i, r := range reasons {
		out[i] = model.RejectReason(r)
	}
	return out
}
