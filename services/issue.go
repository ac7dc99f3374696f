package services

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/models"
)

// IssueInput asks for coupons of a campaign: Count anonymous coupons, or, with
// CustomerRefs, Count coupons (default 1) bound to each customer.
type IssueInput struct {
	CampaignID   int64
	Count        int64
	CustomerRefs []string
	// RequestID, optional, makes the call idempotent (see adminRequest): a
	// repeat returns the same codes and issues nothing.
	RequestID string
}

// IssueResult reports an issuance.
type IssueResult struct {
	Issued int64
	// Codes holds the first MaxCodesReturned codes of the batch; the full list
	// is exported as CSV.
	Codes []string
}

// MaxCodesReturned caps the codes an issuance returns inline.
const MaxCodesReturned = 1000

// issueChunk is how many coupons one savepoint inserts: a code collision
// redoes only its chunk, and a million coupons stay within PostgreSQL's 64
// cached subtransactions, past which every snapshot of every other session
// has to consult pg_subtrans until the issuance ends.
const issueChunk = 50_000

// IssueCoupons issues coupons in one transaction: the campaign's budget is taken
// by one conditional update, so concurrent issuances can never pass the total
// (QUOTA_EXCEEDED), and per-customer limits the same way
// (CUSTOMER_LIMIT_EXCEEDED). Administrators only.
//
// On PostgreSQL the coupons are streamed with COPY on the transaction's own
// connection, chunk by chunk, each chunk in a savepoint that is redone with
// fresh codes if one collides with a code the merchant already has.
func (c *Campaigns) IssueCoupons(ctx context.Context, actor Actor, in IssueInput) (*IssueResult, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	refs, total, err := issueShape(in)
	if err != nil {
		return nil, err
	}
	req, err := newAdminRequest(actor, "issueCoupons", in.RequestID, fmt.Sprint(in.CampaignID, in.Count), strings.Join(in.CustomerRefs, "\x00"))
	if err != nil {
		return nil, err
	}
	db := c.db.WithContext(ctx)
	var prior IssueResult
	if ok, err := req.replayed(db, &prior); err != nil {
		return nil, err
	} else if ok {
		return &prior, nil
	}
	camp, err := c.Get(ctx, actor, in.CampaignID)
	if err != nil {
		return nil, err
	}
	if camp.CodeSource == models.CodeImported {
		return nil, invalidf("campaignId: campaign %d takes the merchant's own codes; use importCoupons", camp.ID)
	}
	now := c.now()
	batch := &models.CouponBatch{MerchantID: actor.MerchantID, CampaignID: camp.ID, ValidFrom: camp.ValidFrom,
		ValidTo: couponValidTo(camp, now), Now: now, Refs: refs, PerRef: total, Uses: camp.UsesPerCoupon, Fill: c.fillCodes}
	if batch.Fill == nil {
		batch.Fill = fillCouponCodes
	}
	chunk := c.chunk
	if chunk <= 0 {
		chunk = issueChunk
	}
	if len(refs) > 0 {
		batch.PerRef = total / int64(len(refs))
	}
	res := &IssueResult{Issued: total}
	issue := func(tx *gorm.DB, copier *sql.Conn) error {
		ok, err := models.ReserveIssueBudget(tx, actor.MerchantID, camp.ID, total)
		if err != nil {
			return err
		}
		if !ok {
			if now, err := c.current(tx, camp.ID); err == nil && now.State != models.CampaignActive {
				return &Error{Code: errcode.InvalidState, Kind: ErrConflict,
					Message: fmt.Sprintf("the campaign is %s and issues no coupons", strings.ToLower(string(now.State)))}
			}
			return ErrIssueQuotaExceeded
		}
		for _, ref := range refs {
			if camp.PerCustomerLimit == 0 {
				break
			}
			ok, err := models.ReserveCustomerQuota(tx, actor.MerchantID, camp.ID, ref, batch.PerRef, camp.PerCustomerLimit)
			if err != nil {
				return err
			}
			if !ok {
				return ErrCustomerLimitExceeded
			}
		}
		codes := make([]string, min(total, chunk))
		for start := int64(0); start < total; start += chunk {
			codes = codes[:min(chunk, total-start)]
			var err error
			if copier != nil {
				err = models.CopyCoupons(tx, copier, batch, start, codes)
			} else {
				err = models.InsertCouponRange(tx, batch, start, codes)
			}
			if err != nil {
				return err
			}
			res.Codes = append(res.Codes, codes[:min(len(codes), MaxCodesReturned-len(res.Codes))]...)
		}
		operator, err := operatorName(tx, actor)
		if err != nil {
			return err
		}
		if err := recordEvent(tx, actor.MerchantID, models.EventCouponIssued, 0, now, map[string]any{
			"campaignId": fmt.Sprint(camp.ID), "count": total, "requestId": nilIfEmpty(in.RequestID),
			"operator": operator, "codesExport": codesExportLink(camp.ID, now)}); err != nil {
			return err
		}
		if err := c.audit.record(tx, actor, "campaign.issue", fmt.Sprintf("campaign:%d", camp.ID),
			fmt.Sprintf("issued %d coupons", total), nil); err != nil {
			return err
		}
		return req.record(tx, res, now)
	}
	if models.DialectOfDB(c.db) == models.Postgres {
		// COPY needs the driver connection under the transaction, so the
		// transaction runs on a connection taken from the pool for it.
		err = db.Connection(func(cdb *gorm.DB) error {
			conn, _ := cdb.Statement.ConnPool.(*sql.Conn)
			if conn != nil && !models.SpeaksPgx(conn) {
				conn = nil
			}
			return cdb.Transaction(func(tx *gorm.DB) error { return issue(tx, conn) })
		})
	} else {
		err = db.Transaction(func(tx *gorm.DB) error { return issue(tx, nil) })
	}
	if err != nil && req != nil {
		// A concurrent copy of the request may have committed first (the
		// copy's insert of the id, or its budget, failed on it): its result
		// is the answer.
		if ok, err := req.replayed(db, &prior); err != nil {
			return nil, err
		} else if ok {
			return &prior, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("issue coupons of campaign %d: %w", camp.ID, err)
	}
	return res, nil
}

func issueShape(in IssueInput) ([]string, int64, error) {
	if len(in.CustomerRefs) == 0 {
		if in.Count < 1 || in.Count > MaxIssuePerCall {
			return nil, 0, invalidf("count must be between 1 and %d", MaxIssuePerCall)
		}
		return nil, in.Count, nil
	}
	if len(in.CustomerRefs) > 10_000 {
		return nil, 0, invalidf("at most 10000 customerRefs per call")
	}
	per := in.Count
	if per == 0 {
		per = 1
	}
	if per < 1 || per > 100 {
		return nil, 0, invalidf("with customerRefs, count is per customer and must be between 1 and 100")
	}
	seen := make(map[string]bool, len(in.CustomerRefs))
	refs := make([]string, 0, len(in.CustomerRefs))
	for _, r := range in.CustomerRefs {
		r = strings.TrimSpace(r)
		if r == "" {
			return nil, 0, invalidf("customerRefs must not be empty")
		}
		if err := checkText("customerRefs", r, 64, false); err != nil {
			return nil, 0, err
		}
		if seen[r] {
			return nil, 0, invalidf("customerRefs lists %q twice", r)
		}
		seen[r] = true
		refs = append(refs, r)
	}
	return refs, per * int64(len(refs)), nil
}

// reissue issues a replacement for a refunded coupon on tx: same campaign and
// customer, a new code, linked to the old coupon. Replacements are counted in
// the campaign's reissued counter, outside its issue budget.
func (c *Campaigns) reissue(tx *gorm.DB, oldID int64, now time.Time) (*models.Coupon, error) {
	old, err := models.CouponByID(tx, oldID)
	if err != nil {
		return nil, err
	}
	camp, err := c.current(tx, old.CampaignID)
	if err != nil {
		return nil, err
	}
	if err := models.CountReissue(tx, old.CampaignID); err != nil {
		return nil, err
	}
	nc := []models.Coupon{{MerchantID: old.MerchantID, CampaignID: old.CampaignID, Status: models.CouponUnused,
		ValidFrom: camp.ValidFrom, ValidTo: couponValidTo(camp, now), CustomerRef: old.CustomerRef, ReissuedFrom: &old.ID,
		CreatedAt: now, UpdatedAt: now}}
	if err := models.InsertCoupons(tx, nc, NewCouponCode); err != nil {
		return nil, err
	}
	return &nc[0], nil
}

// couponValidTo is the end of validity of a coupon of camp issued at now:
// validDaysAfterIssue days (of 24 hours) after, never past the campaign's
// end.
func couponValidTo(camp *models.Campaign, now time.Time) time.Time {
	if camp.ValidDaysAfterIssue <= 0 {
		return camp.ValidTo
	}
	if end := now.UTC().Add(time.Duration(camp.ValidDaysAfterIssue) * 24 * time.Hour); end.Before(camp.ValidTo) {
		return end
	}
	return camp.ValidTo
}
