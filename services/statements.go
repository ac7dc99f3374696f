package services

import (
	"context"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Statements computes, stores and closes daily statements: per store,
// campaign and day, in the merchant's time zone, what was redeemed and
// refunded, and per campaign and day what expired or was voided. Amounts are
// the discounts coupons took off orders, refunds' amounts and coupons' face
// values, in fen.
//
// Past days are read from statement_days once the daily-statement job (or a
// close) stored them; today, and any past day not stored, is computed live
// from the ledger. A closed day's lines never change: business that reaches
// it afterwards is booked as an adjustment on the day it is found.
type Statements struct {
	db *gorm.DB
	// read serves statements and the liability: a read replica when there
	// are any (see Options.ReadReplicas), else db.
	read  *gorm.DB
	now   func() time.Time
	audit *Audit
}

// MaxStatementDays caps the days one statement covers.
const MaxStatementDays = 366

// AdjustmentLookbackDays is how far back, from today, the daily-statement job
// looks for closed days whose live figures moved away from their closed
// lines.
const AdjustmentLookbackDays = 62

// StatementInput asks for the statements of a range of the merchant's local
// days. From and To are written as every time range is (see parseBound): a
// date YYYY-MM-DD, From's day and To's day both included, or an RFC 3339
// time, From inclusive and To exclusive, which must then be the start of a
// local day, since statements cover whole days. StoreID 0 means every store.
type StatementInput struct {
	From    string
	To      string
	StoreID int64
}

// StatementLine is one store's business on one local day, either in total
// (CampaignID 0) or for one campaign; or, with StoreID 0, one campaign's
// coupons that expired or were voided that day, which belong to no store. A
// redemption counts on the day it succeeded, a refund on the day it was made,
// an expiry or void on the day of its transition, so Net may be negative.
// Stored says the line was read from the stored statement rather than
// computed live; Closed that its day is closed.
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
	ExpiredCount   int64
	ExpiredValue   int64
	VoidedCount    int64
	Stored         bool
	Closed         bool
}

// StatementAdjustment is business that reached ClosedDay after it was
// closed, booked on Day: Count and Amount are what the closed day's Figure
// (REDEEMED, REFUNDED, EXPIRED, VOIDED) grew by at the store (0 for expiries
// and voids) and campaign; they are negative when it shrank.
type StatementAdjustment struct {
	Day        string
	ClosedDay  string
	StoreID    int64
	CampaignID int64
	Figure     models.AdjustmentKind
	Count      int64
	Amount     int64
}

// Statement is the statements of a range of days: Stores has a line per store
// and day with any business, Campaigns the same split by campaign, Lapsed a
// line per campaign and day with expiries or voids (not with a store filter);
// all are ordered by day, store and campaign. Adjustments are those booked on
// the range's days; ClosedDays the range's closed days.
type Statement struct {
	Timezone    string
	From        string
	To          string
	Stores      []StatementLine
	Campaigns   []StatementLine
	Lapsed      []StatementLine
	Adjustments []StatementAdjustment
	ClosedDays  []string
}

// Daily returns the statements of the actor's merchant for the local days
// From..To (at most MaxStatementDays): stored days as stored, other days
// computed with grouped SQL over each day's UTC window, so days are right
// across daylight-saving changes. Finance staff and administrators only; bad
// dates are BAD_USER_INPUT.
func (s *Statements) Daily(ctx context.Context, actor Actor, in StatementInput) (*Statement, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	m, loc, err := s.merchant(ctx, actor.MerchantID)
	if err != nil {
		return nil, err
	}
	from, to, err := statementRange(loc, in.From, in.To)
	if err != nil {
		return nil, err
	}
	return s.statement(s.read.WithContext(ctx), m.ID, loc, from, to, in.StoreID)
}

// statementRange reads a statement's from and to (see StatementInput) as the
// local midnights of its first and last day. Both are required; a time that is
// not a local midnight, or a to not after from, is BAD_USER_INPUT.
func statementRange(loc *time.Location, fromS, toS string) (time.Time, time.Time, error) {
	var bounds [2]time.Time
	for i, b := range []struct {
		name, s string
		end     bool
	}{{"from", fromS, false}, {"to", toS, true}} {
		t, err := parseBound(b.name, b.s, loc, b.end)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if t.IsZero() {
			return time.Time{}, time.Time{}, invalidf("%s is required: a date YYYY-MM-DD or an RFC 3339 time", b.name)
		}
		if !t.Equal(localDay(t, loc, 0)) {
			return time.Time{}, time.Time{}, invalidf("%s must be a date YYYY-MM-DD or the start of a day in the merchant's time zone (%s): statements cover whole days", b.name, loc)
		}
		bounds[i] = t.In(loc)
	}
	if !bounds[1].After(bounds[0]) {
		return time.Time{}, time.Time{}, invalidf("to must not be before from")
	}
	// To is exclusive: the last day is the one before it.
	return bounds[0], localDay(bounds[1], loc, -1), nil
}

func (s *Statements) merchant(ctx context.Context, id int64) (*models.Merchant, *time.Location, error) {
	m, err := models.MerchantByID(s.db.WithContext(ctx), id)
	if err != nil {
		return nil, nil, fmt.Errorf("find merchant %d: %w", id, err)
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		return nil, nil, fmt.Errorf("time zone of merchant %d: %w", m.ID, err)
	}
	return m, loc, nil
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

// localDay is the local day of t in loc, at midnight.
func localDay(t time.Time, loc *time.Location, offset int) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day()+offset, 0, 0, 0, 0, loc)
}

type statementKey struct {
	day             string
	store, campaign int64
}

// live computes the merchant's lines of the local days from..to from the
// ledger, one per store, campaign and day with business.
func live(db *gorm.DB, merchantID int64, loc *time.Location, from, to time.Time, storeID int64) ([]StatementLine, error) {
	bounds, err := dayBounds(loc, from, to)
	if err != nil {
		return nil, err
	}
	figs, err := models.StatementFiguresOf(db, merchantID, bounds, storeID)
	if err != nil {
		return nil, err
	}
	out := make([]StatementLine, len(figs))
	for i, f := range figs {
		out[i] = StatementLine{Day: bounds[f.Day].In(loc).Format(time.DateOnly), StoreID: f.StoreID, CampaignID: f.CampaignID,
			RedeemedCount: f.RedeemedCount, RedeemedAmount: f.RedeemedAmount, RefundedCount: f.RefundedCount,
			RefundedAmount: f.RefundedAmount, ExpiredCount: f.ExpiredCount, ExpiredValue: f.ExpiredValue, VoidedCount: f.VoidedCount}
	}
	return out, nil
}

func lineOfRow(r models.StatementDay) StatementLine {
	return StatementLine{Day: r.Day, StoreID: r.StoreID, CampaignID: r.CampaignID, RedeemedCount: r.RedeemedCount,
		RedeemedAmount: r.RedeemedAmount, RefundedCount: r.RefundedCount, RefundedAmount: r.RefundedAmount,
		ExpiredCount: r.ExpiredCount, ExpiredValue: r.ExpiredValue, VoidedCount: r.VoidedCount, Stored: true,
		Closed: r.ClosedAt != nil}
}

// statement builds the statement of the local days from..to: stored days
// from statement_days, the other days live.
func (s *Statements) statement(db *gorm.DB, merchantID int64, loc *time.Location, from, to time.Time, storeID int64) (*Statement, error) {
	bounds, err := dayBounds(loc, from, to)
	if err != nil {
		return nil, err
	}
	days := make([]string, len(bounds)-1)
	for i := range days {
		days[i] = bounds[i].In(loc).Format(time.DateOnly)
	}
	first, last := days[0], days[len(days)-1]
	today := localDay(s.now(), loc, 0).Format(time.DateOnly)

	// Stored past days.
	stored := map[string]bool{}
	closed := map[string]bool{}
	var lines []StatementLine
	if first < today {
		rows, err := models.StatementDaysIn(db, merchantID, first, min(last, localDay(s.now(), loc, -1).Format(time.DateOnly)))
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.IsDayRow() {
				stored[r.Day] = true
				closed[r.Day] = r.ClosedAt != nil
			}
		}
		for _, r := range rows {
			if r.IsDayRow() || !stored[r.Day] || (storeID != 0 && r.StoreID != storeID) {
				continue
			}
			lines = append(lines, lineOfRow(r))
		}
	}
	// Everything else live, over the span of the days not stored.
	lo, hi := -1, -1
	for i, d := range days {
		if !stored[d] {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	if lo >= 0 {
		computed, err := live(db, merchantID, loc, bounds[lo].In(loc), bounds[hi].In(loc), storeID)
		if err != nil {
			return nil, err
		}
		for _, l := range computed {
			if !stored[l.Day] {
				lines = append(lines, l)
			}
		}
	}

	st := &Statement{Timezone: loc.String(), From: first, To: last}
	for _, d := range days {
		if closed[d] {
			st.ClosedDays = append(st.ClosedDays, d)
		}
	}
	totals := map[statementKey]*StatementLine{}
	for _, l := range lines {
		l.NetCount, l.NetAmount = l.RedeemedCount-l.RefundedCount, l.RedeemedAmount-l.RefundedAmount
		if l.StoreID == 0 {
			st.Lapsed = append(st.Lapsed, l)
			continue
		}
		st.Campaigns = append(st.Campaigns, l)
		k := statementKey{l.Day, l.StoreID, 0}
		t := totals[k]
		if t == nil {
			t = &StatementLine{Day: l.Day, StoreID: l.StoreID, Stored: l.Stored, Closed: l.Closed}
			totals[k] = t
		}
		t.RedeemedCount += l.RedeemedCount
		t.RedeemedAmount += l.RedeemedAmount
		t.RefundedCount += l.RefundedCount
		t.RefundedAmount += l.RefundedAmount
		t.NetCount += l.NetCount
		t.NetAmount += l.NetAmount
		t.ExpiredCount += l.ExpiredCount
		t.ExpiredValue += l.ExpiredValue
		t.VoidedCount += l.VoidedCount
	}
	for _, t := range totals {
		st.Stores = append(st.Stores, *t)
	}
	for _, ls := range [][]StatementLine{st.Stores, st.Campaigns, st.Lapsed} {
		sort.Slice(ls, func(i, j int) bool {
			a, b := ls[i], ls[j]
			if a.Day != b.Day {
				return a.Day < b.Day
			}
			if a.StoreID != b.StoreID {
				return a.StoreID < b.StoreID
			}
			return a.CampaignID < b.CampaignID
		})
	}

	adjs, err := models.StatementAdjustmentsBookedIn(db, merchantID, first, last)
	if err != nil {
		return nil, err
	}
	for _, a := range adjs {
		if storeID != 0 && a.StoreID != storeID {
			continue
		}
		st.Adjustments = append(st.Adjustments, StatementAdjustment{Day: a.Day, ClosedDay: a.ClosedDay, StoreID: a.StoreID,
			CampaignID: a.CampaignID, Figure: a.Kind, Count: a.Count, Amount: a.Amount})
	}
	return st, nil
}
