package services

import (
	"context"

	"coupond/models"
)

// ExportBatch is how many rows an export reads with one query while the
// tills are quiet. Exports read in keyset batches with names joined in SQL,
// so a ledger of n rows costs about n/ExportBatch queries and one batch of
// memory, and no read is held open while a slow client downloads. While
// redemptions are being served, an export reads exportBusyBatch rows a
// query, so no query holds a core of the database for long, and rests
// between them (exportPacer).
const ExportBatch = 10000

// exportBusyBatch is the rows of one export query beside the tills: about
// 3 ms of the database's work and as much of the server's, so that no
// query holds a core the tills wait for longer than that (see
// exportPacer).
const exportBusyBatch = 500

// Stream emits the rows of an export to fn, in order, and stops at fn's first
// error. The checks (role, filters) were made before it was returned, so an
// error from a Stream is a database error or fn's own.
type Stream[T any] func(fn func(T) error) error

// RedemptionExportFilter narrows RedemptionExport; zero fields do not filter.
// From and To bound the creation time and are written as every time range
// is: an RFC 3339 time or a date YYYY-MM-DD in the merchant's time zone, From
// inclusive, To exclusive (a date as To includes its day).
type RedemptionExportFilter struct {
	StoreID  int64
	Status   models.FlowStatus
	From, To string
}

// RedemptionExport checks that the actor may read the ledger and returns the
// stream of its merchant's ledger rows that match f, newest first, with store
// and coupon codes and operator names: the rows Redemptions pages through. A
// clerk sees its stores only; a bad from or to is BAD_USER_INPUT.
func (c *Coupons) RedemptionExport(ctx context.Context, actor Actor, f RedemptionExportFilter) (Stream[models.FlowExportRow], error) {
	if err := actor.require(readers()...); err != nil {
		return nil, err
	}
	db := c.read.WithContext(ctx)
	from, to, err := merchantRange(db, actor.MerchantID, f.From, f.To)
	if err != nil {
		return nil, err
	}
	mf := RedemptionFilter{StoreID: f.StoreID, Status: f.Status}.flowFilter(actor)
	mf.From, mf.To = from, to
	return func(fn func(models.FlowExportRow) error) error {
		size, row := exportPace(ctx, c.tills, fn)
		return models.EachFlowForExport(db, actor.MerchantID, mf, size, row)
	}, nil
}

// FindingExportFilter narrows FindingExport; From and To bound the creation
// time as in RedemptionExportFilter.
type FindingExportFilter struct {
	Status   models.FindingStatus
	From, To string
}

// FindingExport checks that the actor may read findings (administrators and
// finance staff) and returns the stream of its merchant's findings that match
// f, newest first. A bad from or to is BAD_USER_INPUT.
func (r *Reconciler) FindingExport(ctx context.Context, actor Actor, f FindingExportFilter) (Stream[models.Finding], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	db := r.read.WithContext(ctx)
	from, to, err := merchantRange(db, actor.MerchantID, f.From, f.To)
	if err != nil {
		return nil, err
	}
	mf := models.FindingFilter{Status: f.Status, From: from, To: to}
	return func(fn func(models.Finding) error) error {
		size, row := exportPace(ctx, r.tills, fn)
		return models.EachFindingForExport(db, actor.MerchantID, mf, size, row)
	}, nil
}

// CodeExport returns the actor's campaign and the stream of its coupons
// issued in from..to (bounds as in RedemptionExportFilter; empty does not
// bound), in issue order. Administrators and finance staff only (see
// MayExportCoupons); an unknown campaign is NOT_FOUND, a bad from or to
// BAD_USER_INPUT.
func (c *Campaigns) CodeExport(ctx context.Context, actor Actor, campaignID int64, from, to string) (*models.Campaign, Stream[models.Coupon], error) {
	camp, err := c.Get(ctx, actor, campaignID)
	if err != nil {
		return nil, nil, err
	}
	if err := actor.MayExportCoupons(); err != nil {
		return nil, nil, err
	}
	db := c.read.WithContext(ctx)
	f, t, err := merchantRange(db, actor.MerchantID, from, to)
	if err != nil {
		return nil, nil, err
	}
	return camp, func(fn func(models.Coupon) error) error {
		size, row := exportPace(ctx, c.tills, fn)
		return models.EachCouponOfCampaign(db, actor.MerchantID, camp.ID, f, t, size, row)
	}, nil
}
