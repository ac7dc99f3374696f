package services

import (
	"context"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

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
