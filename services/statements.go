package services

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Statements computes daily statements from the ledger: per store and day, in
// the merchant's time zone, what was redeemed and refunded. Amounts are the
// discounts coupons took off orders, in fen.
type Statements struct {
	db  *gorm.DB
	now func() time.Time
}

// MaxStatementDays caps the days one statement covers.
const MaxStatementDays = 366

// StatementInput asks for the statements of a range of the merchant's local
// days, both ends included, as YYYY-MM-DD; StoreID 0 means every store.
type StatementInput struct {
	From    string
	To      string
	StoreID int64
}

// StatementLine is one store's business on one local day, either in total
// (CampaignID 0) or for one campaign. A redemption counts on the day it
// succeeded and a refund on the day it was made, so Net may be negative.
type StatementLine struct {
	Day            string
	StoreID        int64
	CampaignID     int64
	RedeemedCount  int64
	RedeemedAmount int64
	RefundedCount  int64
	RefundedAmount int64
	NetCount       int64
	NetAmount      int64
}

// Statement is the statements of a range of days: Stores has a line per store
// and day with any business, Campaigns the same split by campaign; both are
// ordered by day, store and campaign.
type Statement struct {
	Timezone  string
	From      string
	To        string
	Stores    []StatementLine
	Campaigns []StatementLine
}

// Daily returns the statements of the actor's merchant for the local days
// From..To (at most MaxStatementDays), computed with grouped SQL over each day's
// UTC window, so days are right across daylight-saving changes. Finance staff
// and administrators only; bad dates are BAD_USER_INPUT.
func (s *Statements) Daily(ctx context.Context, actor Actor, in StatementInput) (*Statement, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	var m models.Merchant
	if err := s.db.WithContext(ctx).Take(&m, actor.MerchantID).Error; err != nil {
		return nil, fmt.Errorf("find merchant %d: %w", actor.MerchantID, err)
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		return nil, fmt.Errorf("time zone of merchant %d: %w", m.ID, err)
	}
	from, err := time.ParseInLocation(time.DateOnly, in.From, loc)
	if err != nil {
		return nil, invalidf("from must be a date YYYY-MM-DD")
	}
	to, err := time.ParseInLocation(time.DateOnly, in.To, loc)
	if err != nil {
		return nil, invalidf("to must be a date YYYY-MM-DD")
	}
	return s.statement(ctx, m.ID, loc, from, to, in.StoreID)
}

// dayBounds returns the UTC instants at which the local days from..to start,
// plus the end of the last day: n+1 bounds for n days.
func dayBounds(loc *time.Location, from, to time.Time) ([]time.Time, error) {
	if to.Before(from) {
		return nil, invalidf("to must not be before from")
	}
	var bounds []time.Time
	for i := 0; ; i++ {
		d := time.Date(from.Year(), from.Month(), from.Day()+i, 0, 0, 0, 0, loc)
		bounds = append(bounds, d.UTC())
		if d.After(to) {
			break
		}
		if i > MaxStatementDays {
			return nil, invalidf("a statement covers at most %d days", MaxStatementDays)
		}
	}
	return bounds, nil
}

// dayCase is a CASE expression mapping col to the index of its day.
func dayCase(col string, bounds []time.Time) (string, []any) {
	if len(bounds) == 2 {
		return "0", nil
	}
	var b strings.Builder
	args := make([]any, 0, len(bounds))
	b.WriteString("CASE")
	for i := 1; i < len(bounds)-1; i++ {
		fmt.Fprintf(&b, " WHEN %s < ? THEN %d", col, i-1)
		args = append(args, bounds[i])
	}
	fmt.Fprintf(&b, " ELSE %d END", len(bounds)-2)
	return b.String(), args
}

type statementAgg struct {
	Day        int
	StoreID    int64
	CampaignID int64
	Cnt        int64
	Amount     int64
}

func (s *Statements) statement(ctx context.Context, merchantID int64, loc *time.Location, from, to time.Time, storeID int64) (*Statement, error) {
	bounds, err := dayBounds(loc, from, to)
	if err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	query := func(table, ts, amount string) ([]statementAgg, error) {
		day, args := dayCase("x."+ts, bounds)
		q := `SELECT ` + day + ` AS day, x.store_id, c.campaign_id, COUNT(*) AS cnt, COALESCE(SUM(x.` + amount + `), 0) AS amount
FROM ` + table + ` x JOIN coupons c ON c.id = x.coupon_id
WHERE x.merchant_id = ? AND x.status = 'SUCCEEDED' AND x.` + ts + ` >= ? AND x.` + ts + ` < ?`
		args = append(args, merchantID, bounds[0], bounds[len(bounds)-1])
		if storeID != 0 {
			q += " AND x.store_id = ?"
			args = append(args, storeID)
		}
		q += " GROUP BY 1, x.store_id, c.campaign_id"
		var rows []statementAgg
		if err := db.Raw(q, args...).Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("statement of %s: %w", table, err)
		}
		return rows, nil
	}
	redeemed, err := query("redemption_flows", "finished_at", "discount_amount")
	if err != nil {
		return nil, err
	}
	refunded, err := query("refund_flows", "created_at", "amount")
	if err != nil {
		return nil, err
	}
	type key struct {
		day             int
		store, campaign int64
	}
	lines := map[key]*StatementLine{}
	line := func(k key) *StatementLine {
		l := lines[k]
		if l == nil {
			l = &StatementLine{Day: bounds[k.day].In(loc).Format(time.DateOnly), StoreID: k.store, CampaignID: k.campaign}
			lines[k] = l
		}
		return l
	}
	for _, r := range redeemed {
		for _, k := range []key{{r.Day, r.StoreID, r.CampaignID}, {r.Day, r.StoreID, 0}} {
			l := line(k)
			l.RedeemedCount += r.Cnt
			l.RedeemedAmount += r.Amount
		}
	}
	for _, r := range refunded {
		for _, k := range []key{{r.Day, r.StoreID, r.CampaignID}, {r.Day, r.StoreID, 0}} {
			l := line(k)
			l.RefundedCount += r.Cnt
			l.RefundedAmount += r.Amount
		}
	}
	keys := make([]key, 0, len(lines))
	for k := range lines {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.day != b.day {
			return a.day < b.day
		}
		if a.store != b.store {
			return a.store < b.store
		}
		return a.campaign < b.campaign
	})
	st := &Statement{Timezone: loc.String(), From: from.Format(time.DateOnly), To: to.Format(time.DateOnly)}
	for _, k := range keys {
		l := lines[k]
		l.NetCount, l.NetAmount = l.RedeemedCount-l.RefundedCount, l.RedeemedAmount-l.RefundedAmount
		if k.campaign == 0 {
			st.Stores = append(st.Stores, *l)
		} else {
			st.Campaigns = append(st.Campaigns, *l)
		}
	}
	return st, nil
}

// CloseDayResult totals the statements of the previous local day of every
// merchant.
type CloseDayResult struct {
	Merchants      int
	Lines          int
	RedeemedCount  int64
	RedeemedAmount int64
	RefundedCount  int64
	RefundedAmount int64
}

// add adds the totals of one merchant's day, o, to r.
func (r *CloseDayResult) add(o CloseDayResult) {
	r.Merchants += o.Merchants
	r.Lines += o.Lines
	r.RedeemedCount += o.RedeemedCount
	r.RedeemedAmount += o.RedeemedAmount
	r.RefundedCount += o.RefundedCount
	r.RefundedAmount += o.RefundedAmount
}

// Counts returns the result as named counts for the job-run record.
func (r CloseDayResult) Counts() map[string]int64 {
	return map[string]int64{"merchants": int64(r.Merchants), "lines": int64(r.Lines),
		"redeemedCount": r.RedeemedCount, "redeemedAmount": r.RedeemedAmount,
		"refundedCount": r.RefundedCount, "refundedAmount": r.RefundedAmount}
}

// CloseDay computes, for every merchant, the statements of the day before
// today in the merchant's time zone, and returns their totals; the daily
// statement job records them in its run. It fails on the first merchant whose
// statement cannot be computed.
func (s *Statements) CloseDay(ctx context.Context) (CloseDayResult, error) {
	res, _, err := s.closeDay(ctx, 0)
	return res, err
}

// CloseDayMerchant is CloseDay for one merchant.
func (s *Statements) CloseDayMerchant(ctx context.Context, merchantID int64) (CloseDayResult, error) {
	res, _, err := s.closeDay(ctx, merchantID)
	return res, err
}

// closeDay is CloseDay for one merchant, or every merchant when merchantID is
// 0; it also returns the totals of each merchant whose day had lines.
func (s *Statements) closeDay(ctx context.Context, merchantID int64) (CloseDayResult, map[int64]*CloseDayResult, error) {
	var res CloseDayResult
	byMerchant := map[int64]*CloseDayResult{}
	var merchants []models.Merchant
	q := s.db.WithContext(ctx).Order("id")
	if merchantID != 0 {
		q = q.Where("id = ?", merchantID)
	}
	if err := q.Find(&merchants).Error; err != nil {
		return res, byMerchant, fmt.Errorf("list merchants: %w", err)
	}
	now := s.now()
	for _, m := range merchants {
		loc, err := time.LoadLocation(m.Timezone)
		if err != nil {
			return res, byMerchant, fmt.Errorf("time zone of merchant %d: %w", m.ID, err)
		}
		local := now.In(loc)
		day := time.Date(local.Year(), local.Month(), local.Day()-1, 0, 0, 0, 0, loc)
		st, err := s.statement(ctx, m.ID, loc, day, day, 0)
		if err != nil {
			return res, byMerchant, fmt.Errorf("close day %s of merchant %d: %w", day.Format(time.DateOnly), m.ID, err)
		}
		one := CloseDayResult{Merchants: 1, Lines: len(st.Stores)}
		for _, l := range st.Stores {
			one.RedeemedCount += l.RedeemedCount
			one.RedeemedAmount += l.RedeemedAmount
			one.RefundedCount += l.RefundedCount
			one.RefundedAmount += l.RefundedAmount
		}
		res.add(one)
		if one.Lines > 0 {
			byMerchant[m.ID] = &one
		}
	}
	return res, byMerchant, nil
}
