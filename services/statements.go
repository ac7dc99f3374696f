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
	db    *gorm.DB
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
// days, both ends included, as YYYY-MM-DD; StoreID 0 means every store.
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
	from, err := time.ParseInLocation(time.DateOnly, in.From, loc)
	if err != nil {
		return nil, invalidf("from must be a date YYYY-MM-DD")
	}
	to, err := time.ParseInLocation(time.DateOnly, in.To, loc)
	if err != nil {
		return nil, invalidf("to must be a date YYYY-MM-DD")
	}
	return s.statement(s.db.WithContext(ctx), m.ID, loc, from, to, in.StoreID)
}

func (s *Statements) merchant(ctx context.Context, id int64) (*models.Merchant, *time.Location, error) {
	var m models.Merchant
	if err := s.db.WithContext(ctx).Take(&m, id).Error; err != nil {
		return nil, nil, fmt.Errorf("find merchant %d: %w", id, err)
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		return nil, nil, fmt.Errorf("time zone of merchant %d: %w", m.ID, err)
	}
	return &m, loc, nil
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

// ErrDayNotOver is returned when closing today or a day still to come.
var ErrDayNotOver = invalidf("only a day that is over in the merchant's time zone can be closed")

// CloseStatementDay closes the local day date (YYYY-MM-DD) of the actor's
// merchant: in one transaction it computes the day's lines as the ledger has
// them now and stores them with the time of closing, audited as
// statement.close. It returns the day's statement. A day already closed is
// returned as it is, with no second audit record; a day before the
// merchant's first business closes empty. Finance staff and administrators
// only; a bad date, today or a later day is BAD_USER_INPUT.
func (s *Statements) CloseStatementDay(ctx context.Context, actor Actor, date string) (*Statement, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	m, loc, err := s.merchant(ctx, actor.MerchantID)
	if err != nil {
		return nil, err
	}
	day, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		return nil, invalidf("date must be a date YYYY-MM-DD")
	}
	if !day.Before(localDay(s.now(), loc, 0)) {
		return nil, ErrDayNotOver
	}
	if _, _, err := s.storeDay(ctx, actor, m.ID, loc, day, true); err != nil {
		return nil, err
	}
	return s.statement(s.db.WithContext(ctx), m.ID, loc, day, day, 0)
}

// storeDay computes the merchant's lines of the local day and stores them,
// closing the day when close is set, in one transaction. It reports whether
// it wrote (false: the day was closed already) and the lines it stored.
func (s *Statements) storeDay(ctx context.Context, actor Actor, merchantID int64, loc *time.Location, day time.Time, close bool) (bool, []StatementLine, error) {
	date := day.Format(time.DateOnly)
	now := s.now()
	var closedAt *time.Time
	if close {
		closedAt = &now
	}
	var lines []StatementLine
	wrote := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		open, err := models.ClaimStatementDay(tx, merchantID, date, now, closedAt)
		if err != nil || !open {
			return err
		}
		wrote = true
		if lines, err = live(tx, merchantID, loc, day, day, 0); err != nil {
			return err
		}
		rows := make([]models.StatementDay, len(lines))
		var t StatementLine
		for i, l := range lines {
			rows[i] = models.StatementDay{StoreID: l.StoreID, CampaignID: l.CampaignID, RedeemedCount: l.RedeemedCount,
				RedeemedAmount: l.RedeemedAmount, RefundedCount: l.RefundedCount, RefundedAmount: l.RefundedAmount,
				ExpiredCount: l.ExpiredCount, ExpiredValue: l.ExpiredValue, VoidedCount: l.VoidedCount}
			t.RedeemedCount += l.RedeemedCount
			t.RedeemedAmount += l.RedeemedAmount
			t.RefundedCount += l.RefundedCount
			t.RefundedAmount += l.RefundedAmount
			t.ExpiredCount += l.ExpiredCount
			t.ExpiredValue += l.ExpiredValue
			t.VoidedCount += l.VoidedCount
		}
		if err := models.ReplaceStatementLines(tx, merchantID, date, rows); err != nil {
			return err
		}
		if !close {
			return nil
		}
		detail := fmt.Sprintf("closed %s with %d lines: redeemed %d (%d), refunded %d (%d), expired %d (%d), voided %d",
			date, len(lines), t.RedeemedCount, t.RedeemedAmount, t.RefundedCount, t.RefundedAmount, t.ExpiredCount,
			t.ExpiredValue, t.VoidedCount)
		return s.audit.record(tx, actor, "statement.close", "statement_day:"+date, detail, nil)
	})
	if err != nil {
		return false, nil, fmt.Errorf("store statement %s of merchant %d: %w", date, merchantID, err)
	}
	return wrote, lines, nil
}

// figure is one figure of a line: a count and an amount.
type figure struct{ count, amount int64 }

// figures splits a line into its figures by adjustment kind.
func figures(l StatementLine) map[models.AdjustmentKind]figure {
	return map[models.AdjustmentKind]figure{
		models.AdjustRedeemed: {l.RedeemedCount, l.RedeemedAmount},
		models.AdjustRefunded: {l.RefundedCount, l.RefundedAmount},
		models.AdjustExpired:  {l.ExpiredCount, l.ExpiredValue},
		models.AdjustVoided:   {l.VoidedCount, 0},
	}
}

// bookAdjustments compares the closed days of the last
// AdjustmentLookbackDays with the ledger and books what each closed line is
// short of (or over) its live figures, net of what earlier adjustments
// already booked, as adjustments on today. It is idempotent: a difference is
// booked once, and a second run finds nothing left. It returns how many
// adjustment rows it wrote to.
func (s *Statements) bookAdjustments(ctx context.Context, merchantID int64, loc *time.Location) (int, error) {
	now := s.now()
	today := localDay(now, loc, 0)
	from := localDay(now, loc, -AdjustmentLookbackDays)
	yesterday := localDay(now, loc, -1)
	db := s.db.WithContext(ctx)
	rows, err := models.ClosedStatementDays(db, merchantID, from.Format(time.DateOnly), yesterday.Format(time.DateOnly))
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	frozen := map[string]map[statementKey]StatementLine{}
	for _, r := range rows {
		if frozen[r.Day] == nil {
			frozen[r.Day] = map[statementKey]StatementLine{}
		}
		if !r.IsDayRow() {
			frozen[r.Day][statementKey{r.Day, r.StoreID, r.CampaignID}] = lineOfRow(r)
		}
	}
	lo, err := time.ParseInLocation(time.DateOnly, rows[0].Day, loc)
	if err != nil {
		return 0, fmt.Errorf("closed day %q: %w", rows[0].Day, err)
	}
	computed, err := live(db, merchantID, loc, lo, yesterday, 0)
	if err != nil {
		return 0, err
	}
	current := map[string]map[statementKey]StatementLine{}
	for _, l := range computed {
		if frozen[l.Day] == nil {
			continue // not closed
		}
		if current[l.Day] == nil {
			current[l.Day] = map[statementKey]StatementLine{}
		}
		current[l.Day][statementKey{l.Day, l.StoreID, l.CampaignID}] = l
	}
	closedDays := make([]string, 0, len(frozen))
	for d := range frozen {
		closedDays = append(closedDays, d)
	}
	sort.Strings(closedDays)
	booked := 0
	for _, d := range closedDays {
		n, err := s.bookDay(ctx, merchantID, d, today.Format(time.DateOnly), frozen[d], current[d])
		if err != nil {
			return booked, err
		}
		booked += n
	}
	return booked, nil
}

// bookDay books the differences of one closed day, under its day row's lock,
// against the adjustments booked so far.
func (s *Statements) bookDay(ctx context.Context, merchantID int64, closedDay, today string, frozen, current map[statementKey]StatementLine) (int, error) {
	type key struct {
		statementKey
		kind models.AdjustmentKind
	}
	diff := map[key]figure{}
	for k, l := range current {
		for kind, f := range figures(l) {
			d := diff[key{k, kind}]
			diff[key{k, kind}] = figure{d.count + f.count, d.amount + f.amount}
		}
	}
	for k, l := range frozen {
		for kind, f := range figures(l) {
			d := diff[key{k, kind}]
			diff[key{k, kind}] = figure{d.count - f.count, d.amount - f.amount}
		}
	}
	pending := false
	for _, d := range diff {
		if d != (figure{}) {
			pending = true
			break
		}
	}
	if !pending {
		return 0, nil // the common case: no transaction at all
	}
	booked := 0
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		booked = 0
		ok, err := models.LockClosedStatementDay(tx, merchantID, closedDay)
		if err != nil || !ok {
			return err
		}
		prior, err := models.StatementAdjustmentsAgainst(tx, merchantID, closedDay, closedDay)
		if err != nil {
			return err
		}
		left := make(map[key]figure, len(diff))
		for k, d := range diff {
			left[k] = d
		}
		for _, a := range prior {
			k := key{statementKey{closedDay, a.StoreID, a.CampaignID}, a.Kind}
			d := left[k]
			left[k] = figure{d.count - a.Count, d.amount - a.Amount}
		}
		keys := make([]key, 0, len(left))
		for k, d := range left {
			if d != (figure{}) {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.store != b.store {
				return a.store < b.store
			}
			if a.campaign != b.campaign {
				return a.campaign < b.campaign
			}
			return a.kind < b.kind
		})
		now := s.now()
		for _, k := range keys {
			d := left[k]
			if err := models.BookStatementAdjustment(tx, models.StatementAdjustment{MerchantID: merchantID, Day: today,
				ClosedDay: closedDay, StoreID: k.store, CampaignID: k.campaign, Kind: k.kind, Count: d.count,
				Amount: d.amount, CreatedAt: now}); err != nil {
				return err
			}
			booked++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("adjustments of closed day %s of merchant %d: %w", closedDay, merchantID, err)
	}
	return booked, nil
}

// CloseDayResult totals what the daily-statement job did: the statements of
// the previous local day it stored, and the adjustments it booked.
type CloseDayResult struct {
	Merchants      int
	Lines          int
	RedeemedCount  int64
	RedeemedAmount int64
	RefundedCount  int64
	RefundedAmount int64
	ExpiredCount   int64
	VoidedCount    int64
	// AlreadyClosed counts merchants whose previous day finance had closed
	// before the job came to store it.
	AlreadyClosed int
	// Adjustments counts the adjustment rows booked.
	Adjustments int
}

// add adds the totals of one merchant's day, o, to r.
func (r *CloseDayResult) add(o CloseDayResult) {
	r.Merchants += o.Merchants
	r.Lines += o.Lines
	r.RedeemedCount += o.RedeemedCount
	r.RedeemedAmount += o.RedeemedAmount
	r.RefundedCount += o.RefundedCount
	r.RefundedAmount += o.RefundedAmount
	r.ExpiredCount += o.ExpiredCount
	r.VoidedCount += o.VoidedCount
	r.AlreadyClosed += o.AlreadyClosed
	r.Adjustments += o.Adjustments
}

// Counts returns the result as named counts for the job-run record.
func (r CloseDayResult) Counts() map[string]int64 {
	return map[string]int64{"merchants": int64(r.Merchants), "lines": int64(r.Lines),
		"redeemedCount": r.RedeemedCount, "redeemedAmount": r.RedeemedAmount,
		"refundedCount": r.RefundedCount, "refundedAmount": r.RefundedAmount,
		"expiredCount": r.ExpiredCount, "voidedCount": r.VoidedCount,
		"alreadyClosed": int64(r.AlreadyClosed), "adjustments": int64(r.Adjustments)}
}

// CloseDay stores, for every merchant, the statement of the day before today
// in the merchant's time zone (unless finance closed it already), books the
// adjustments of recently closed days, and returns the totals; the daily
// statement job records them in its run. It fails on the first merchant whose
// statement cannot be stored.
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
// 0; it also returns the totals of each merchant whose day had lines or
// adjustments.
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
		if err := ctx.Err(); err != nil {
			return res, byMerchant, fmt.Errorf("daily statement: %w", err)
		}
		loc, err := time.LoadLocation(m.Timezone)
		if err != nil {
			return res, byMerchant, fmt.Errorf("time zone of merchant %d: %w", m.ID, err)
		}
		day := localDay(now, loc, -1)
		wrote, lines, err := s.storeDay(ctx, SystemActor(m.ID), m.ID, loc, day, false)
		if err != nil {
			return res, byMerchant, err
		}
		one := CloseDayResult{Merchants: 1}
		if !wrote {
			one.AlreadyClosed = 1
		}
		for _, l := range lines {
			if l.StoreID != 0 {
				one.Lines++ // counted per store and campaign
			}
			one.RedeemedCount += l.RedeemedCount
			one.RedeemedAmount += l.RedeemedAmount
			one.RefundedCount += l.RefundedCount
			one.RefundedAmount += l.RefundedAmount
			one.ExpiredCount += l.ExpiredCount
			one.VoidedCount += l.VoidedCount
		}
		if one.Adjustments, err = s.bookAdjustments(ctx, m.ID, loc); err != nil {
			return res, byMerchant, err
		}
		res.add(one)
		if len(lines) > 0 || one.Adjustments > 0 {
			byMerchant[m.ID] = &one
		}
	}
	return res, byMerchant, nil
}

// LiabilityValuation says how DISCOUNT coupons, whose worth depends on the
// order, enter a liability's face value.
type LiabilityValuation string

// DiscountAtCap: a DISCOUNT coupon is counted at its cap (max discount), the
// most it can take off; one without a cap adds nothing to the face value and
// is counted in UncappedDiscountCount.
const DiscountAtCap LiabilityValuation = "CAP"

// Liability is what a merchant owes on coupons that may still be redeemed.
type Liability struct {
	// At is when it was computed.
	At time.Time
	// UnusedCount is how many UNUSED coupons have not reached the end of
	// their validity (and whose campaign has not ended).
	UnusedCount int64
	// FaceValue is their face value in fen: CASH and EXCHANGE coupons at
	// their value, DISCOUNT coupons as DiscountCouponsAt says.
	FaceValue int64
	// DiscountCouponsAt is how DISCOUNT coupons are valued: DiscountAtCap.
	DiscountCouponsAt LiabilityValuation
	// UncappedDiscountCount is how many of the unused coupons are DISCOUNT
	// coupons without a cap, which add nothing to FaceValue.
	UncappedDiscountCount int64
}

// Liability returns the outstanding liability of the actor's merchant now.
// Finance staff and administrators only.
func (s *Statements) Liability(ctx context.Context, actor Actor) (*Liability, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	now := s.now()
	l, err := models.LiabilityOf(s.db.WithContext(ctx), actor.MerchantID, now)
	if err != nil {
		return nil, err
	}
	return &Liability{At: now, UnusedCount: l.UnusedCount, FaceValue: l.FaceValue, DiscountCouponsAt: DiscountAtCap,
		UncappedDiscountCount: l.UncappedDiscountCount}, nil
}
