package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/models"
)

// MaxImportPerCall caps the codes of one importCoupons call (and of one batch
// of a CSV upload).
const MaxImportPerCall = 10_000

// ImportRejectReason says why a line of an import was not imported.
type ImportRejectReason string

// Reasons a line is not imported.
const (
	// ImportDuplicate: the code is on an earlier line of the same import.
	ImportDuplicate ImportRejectReason = "DUPLICATE_IN_IMPORT"
	// ImportExists: the merchant already has the code.
	ImportExists ImportRejectReason = "ALREADY_EXISTS"
	// ImportInvalid: the line is not a valid code (CSV uploads only; a call
	// of importCoupons with one is BAD_USER_INPUT).
	ImportInvalid ImportRejectReason = "INVALID"
)

// ImportRejection is one line that was not imported; nothing of it was
// written.
type ImportRejection struct {
	// Line is the 1-based position of the code in the call, or its line in
	// the uploaded file.
	Line   int64              `json:"line"`
	Code   string             `json:"code"`
	Reason ImportRejectReason `json:"reason"`
}

// ImportResult reports an import.
type ImportResult struct {
	Imported int64             `json:"imported"`
	Rejected []ImportRejection `json:"rejected"`
}

// ImportInput is one importCoupons call: codes and, optionally, one customer
// reference per code ("" for none).
type ImportInput struct {
	CampaignID   int64
	Codes        []string
	CustomerRefs []string
	// RequestID, optional, makes the call idempotent (see adminRequest).
	RequestID string
}

// ImportLine is one line of an import: where it came from, the code as
// written and its customer ("" for none).
type ImportLine struct {
	Line        int64
	Code        string
	CustomerRef string
}

// ImportCoupons imports the merchant's own codes into an IMPORTED campaign;
// administrators only. A code outside 6 to 32 of A-Z and 0-9 (once
// normalised) or an invalid customer reference is BAD_USER_INPUT naming it
// (codes[i], customerRefs[i]) and nothing is imported. A code on an earlier
// line of the call, or one the merchant already has, is reported for its line
// and not written; the rest is imported in one transaction. Imported codes
// count against the campaign's totalQuantity (QUOTA_EXCEEDED, nothing
// imported) and per-customer limit, as issued ones do.
func (c *Campaigns) ImportCoupons(ctx context.Context, actor Actor, in ImportInput) (*ImportResult, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	if len(in.Codes) < 1 || len(in.Codes) > MaxImportPerCall {
		return nil, invalidf("codes must hold 1 to %d codes, got %d", MaxImportPerCall, len(in.Codes))
	}
	if in.CustomerRefs != nil && len(in.CustomerRefs) != len(in.Codes) {
		return nil, invalidf("customerRefs must hold one reference per code (%d), got %d", len(in.Codes), len(in.CustomerRefs))
	}
	lines := make([]ImportLine, len(in.Codes))
	for i, code := range in.Codes {
		lines[i] = ImportLine{Line: int64(i + 1), Code: code}
		if in.CustomerRefs != nil {
			lines[i].CustomerRef = in.CustomerRefs[i]
		}
	}
	return c.importLines(ctx, actor, "importCoupons", in.CampaignID, in.RequestID, lines, false)
}

// ImportBatch imports one batch of a file upload (see httpapi): like
// ImportCoupons, but an invalid line is reported (INVALID) instead of
// refusing the batch, and requestID names the batch, so an upload resumed
// with the same request id replays the batches it already imported.
func (c *Campaigns) ImportBatch(ctx context.Context, actor Actor, campaignID int64, requestID string, lines []ImportLine) (*ImportResult, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	if len(lines) < 1 || len(lines) > MaxImportPerCall {
		return nil, invalidf("a batch holds 1 to %d lines, got %d", MaxImportPerCall, len(lines))
	}
	return c.importLines(ctx, actor, "importCouponsFile", campaignID, requestID, lines, true)
}

func (c *Campaigns) importLines(ctx context.Context, actor Actor, op string, campaignID int64, requestID string,
	lines []ImportLine, lenient bool) (*ImportResult, error) {
	res := &ImportResult{Rejected: []ImportRejection{}}
	rows := make([]models.ImportedCoupon, 0, len(lines))
	lineOf := make(map[string]int64, len(lines))
	raw := make([]string, 0, 2*len(lines))
	for i, l := range lines {
		raw = append(raw, fmt.Sprint(l.Line), l.Code, l.CustomerRef)
		code, err := importedCodeKey(l.Code)
		if err == nil {
			err = checkCustomerRef(l.CustomerRef)
			if err != nil && !lenient {
				return nil, invalidf("customerRefs[%d]: %s", i, errMessage(err))
			}
		} else if !lenient {
			return nil, invalidf("codes[%d]: %s", i, errMessage(err))
		}
		if err != nil {
			res.Rejected = append(res.Rejected, ImportRejection{Line: l.Line, Code: l.Code, Reason: ImportInvalid})
			continue
		}
		if _, dup := lineOf[code]; dup {
			res.Rejected = append(res.Rejected, ImportRejection{Line: l.Line, Code: code, Reason: ImportDuplicate})
			continue
		}
		lineOf[code] = l.Line
		r := models.ImportedCoupon{Code: code}
		if l.CustomerRef != "" {
			ref := l.CustomerRef
			r.CustomerRef = &ref
		}
		rows = append(rows, r)
	}
	req, err := newAdminRequest(actor, op, requestID, fmt.Sprint(campaignID), strings.Join(raw, "\x00"))
	if err != nil {
		return nil, err
	}
	db := c.db.WithContext(ctx)
	var prior ImportResult
	if ok, err := req.replayed(db, &prior); err != nil {
		return nil, err
	} else if ok {
		return &prior, nil
	}
	camp, err := c.Get(ctx, actor, campaignID)
	if err != nil {
		return nil, err
	}
	if camp.CodeSource != models.CodeImported {
		return nil, invalidf("campaignId: campaign %d generates its codes; import into a campaign created with codeSource IMPORTED", camp.ID)
	}
	slices.SortFunc(rows, func(a, b models.ImportedCoupon) int { return strings.Compare(a.Code, b.Code) })
	now := c.now()
	batch := &models.CouponBatch{MerchantID: actor.MerchantID, CampaignID: camp.ID, ValidFrom: camp.ValidFrom,
		ValidTo: camp.ValidTo, Now: now}
	write := func(tx *gorm.DB, copier *sql.Conn) error {
		var inserted map[string]bool
		var err error
		if copier != nil {
			inserted, err = models.CopyImportedCoupons(tx, copier, batch, rows)
		} else {
			inserted, err = models.InsertImportedCoupons(tx, batch, rows)
		}
		if err != nil {
			return err
		}
		perRef := map[string]int64{}
		for _, r := range rows {
			if !inserted[r.Code] {
				res.Rejected = append(res.Rejected, ImportRejection{Line: lineOf[r.Code], Code: r.Code, Reason: ImportExists})
			} else if r.CustomerRef != nil {
				perRef[*r.CustomerRef]++
			}
		}
		res.Imported = int64(len(inserted))
		if res.Imported > 0 {
			ok, err := models.ReserveIssueBudget(tx, actor.MerchantID, camp.ID, res.Imported)
			if err != nil {
				return err
			}
			if !ok {
				if now, err := c.current(tx, camp.ID); err == nil && now.State != models.CampaignActive {
					return &Error{Code: errcode.InvalidState, Kind: ErrConflict,
						Message: fmt.Sprintf("the campaign is %s and takes no coupons", strings.ToLower(string(now.State)))}
				}
				return ErrIssueQuotaExceeded
			}
		}
		if camp.PerCustomerLimit > 0 {
			refs := make([]string, 0, len(perRef))
			for ref := range perRef {
				refs = append(refs, ref)
			}
			slices.Sort(refs)
			for _, ref := range refs {
				ok, err := models.ReserveCustomerQuota(tx, actor.MerchantID, camp.ID, ref, perRef[ref], camp.PerCustomerLimit)
				if err != nil {
					return err
				}
				if !ok {
					return ErrCustomerLimitExceeded
				}
			}
		}
		slices.SortStableFunc(res.Rejected, func(a, b ImportRejection) int { return int(a.Line - b.Line) })
		if err := c.audit.record(tx, actor, "campaign.import", fmt.Sprintf("campaign:%d", camp.ID),
			fmt.Sprintf("imported %d codes, %d lines rejected", res.Imported, len(res.Rejected)), nil); err != nil {
			return err
		}
		return req.record(tx, res, now)
	}
	if models.DialectOfDB(c.db) == models.Postgres {
		// COPY needs the driver connection under the transaction, as in
		// IssueCoupons.
		err = db.Connection(func(cdb *gorm.DB) error {
			conn, _ := cdb.Statement.ConnPool.(*sql.Conn)
			if conn != nil && !models.SpeaksPgx(conn) {
				conn = nil
			}
			return cdb.Transaction(func(tx *gorm.DB) error { return write(tx, conn) })
		})
	} else {
		err = db.Transaction(func(tx *gorm.DB) error { return write(tx, nil) })
	}
	if err != nil && req != nil {
		// A concurrent copy of the request may have committed first.
		if ok, err := req.replayed(db, &prior); err != nil {
			return nil, err
		} else if ok {
			return &prior, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("import coupons into campaign %d: %w", camp.ID, err)
	}
	return res, nil
}

// checkCustomerRef validates an optional customer reference.
func checkCustomerRef(ref string) error {
	if ref == "" {
		return nil
	}
	if strings.TrimSpace(ref) != ref {
		return invalidf("customer reference must not start or end with spaces")
	}
	return checkText("customer reference", ref, 64, false)
}

// errMessage is the message of a service error, without its code.
func errMessage(err error) string {
	var se *Error
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}
