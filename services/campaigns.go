package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"coupond/models"
)

// Campaigns creates campaigns (批次) and issues their coupons.
type Campaigns struct {
	db    *gorm.DB
	now   func() time.Time
	audit *Audit
	// byID caches campaigns, which never change after creation except for
	// their issue counters, which the cache is never read for.
	byID sync.Map
	// chunk and fillCodes default to issueChunk and fillCouponCodes; tests
	// shrink chunks and force code collisions.
	chunk     int64
	fillCodes func([]string)
}

// CreateCampaignInput describes a new campaign. Money is in fen.
type CreateCampaignInput struct {
	Name string
	Type models.CampaignType
	// Value is the amount off (CASH), the percent off (DISCOUNT, 1-99) or the
	// value of the item (EXCHANGE).
	Value int64
	// MaxDiscount caps a DISCOUNT coupon's amount off; 0 means no cap.
	MaxDiscount int64
	MinSpend    int64
	ValidFrom   time.Time
	ValidTo     time.Time
	// StoreIDs limits the campaign to these stores; empty means every store.
	StoreIDs      []int64
	TotalQuantity int64
	// RefundWindowMinutes is how long after redemption a clerk may refund;
	// nil means 1,440 (one day), 0 means clerks may not refund.
	RefundWindowMinutes *int64
	// PerCustomerLimit caps the coupons one customer reference may be issued;
	// 0 means no limit.
	PerCustomerLimit int64
}

// DefaultRefundWindowMinutes applies when a campaign does not set one.
const DefaultRefundWindowMinutes = 1440

// MaxIssuePerCall caps one IssueCoupons call.
const MaxIssuePerCall = 1_000_000

// Create creates a campaign; administrators only. It fails with BAD_USER_INPUT
// on an invalid rule and NOT_FOUND for a store of another merchant.
func (c *Campaigns) Create(ctx context.Context, actor Actor, in CreateCampaignInput) (*models.Campaign, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	in.Name = strings.TrimSpace(in.Name)
	if err := checkText("name", in.Name, 100, false); err != nil {
		return nil, err
	}
	if err := validateCampaign(&in); err != nil {
		return nil, err
	}
	camp := &models.Campaign{MerchantID: actor.MerchantID, Name: in.Name, Type: in.Type, Value: in.Value,
		MaxDiscount: in.MaxDiscount, MinSpend: in.MinSpend, ValidFrom: in.ValidFrom.UTC(), ValidTo: in.ValidTo.UTC(),
		AllStores: len(in.StoreIDs) == 0, TotalQuantity: in.TotalQuantity, PerCustomerLimit: in.PerCustomerLimit,
		RefundWindowMinutes: *in.RefundWindowMinutes, CreatedAt: c.now()}
	err := c.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, id := range in.StoreIDs {
			if err := storeMustExist(tx, actor.MerchantID, id); err != nil {
				return err
			}
		}
		if err := tx.Create(camp).Error; err != nil {
			return err
		}
		for _, id := range in.StoreIDs {
			if err := tx.Create(&models.CampaignStore{MerchantID: actor.MerchantID, CampaignID: camp.ID, StoreID: id}).Error; err != nil {
				return err
			}
		}
		return c.audit.record(tx, actor, "campaign.create", fmt.Sprintf("campaign:%d", camp.ID), camp.Name, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("create campaign: %w", err)
	}
	return camp, nil
}

func validateCampaign(in *CreateCampaignInput) error {
	switch {
	case in.Name == "" || utf8.RuneCountInString(in.Name) > 100:
		return invalidf("name is required and must be at most 100 characters")
	case in.Type != models.CampaignCash && in.Type != models.CampaignDiscount && in.Type != models.CampaignExchange:
		return invalidf("type must be CASH, DISCOUNT or EXCHANGE")
	case in.Value <= 0:
		return invalidf("value must be positive")
	case in.Type == models.CampaignDiscount && in.Value >= 100:
		return invalidf("a DISCOUNT value is the percent off and must be between 1 and 99")
	case in.MaxDiscount < 0 || in.MinSpend < 0:
		return invalidf("maxDiscount and minSpend must not be negative")
	case in.ValidFrom.IsZero() || in.ValidTo.IsZero() || !in.ValidFrom.Before(in.ValidTo):
		return invalidf("validFrom must be before validTo")
	case in.TotalQuantity <= 0 || in.TotalQuantity > 100_000_000:
		return invalidf("totalQuantity must be between 1 and 100000000")
	case in.PerCustomerLimit < 0:
		return invalidf("perCustomerLimit must not be negative")
	}
	if in.RefundWindowMinutes == nil {
		w := int64(DefaultRefundWindowMinutes)
		in.RefundWindowMinutes = &w
	}
	if *in.RefundWindowMinutes < 0 {
		return invalidf("refundWindowMinutes must not be negative")
	}
	return nil
}

// IssueInput asks for coupons of a campaign: Count anonymous coupons, or, with
// CustomerRefs, Count coupons (default 1) bound to each customer.
type IssueInput struct {
	CampaignID   int64
	Count        int64
	CustomerRefs []string
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
	db := c.db.WithContext(ctx)
	camp, err := c.Get(ctx, actor, in.CampaignID)
	if err != nil {
		return nil, err
	}
	now := c.now()
	batch := &couponBatch{merchantID: actor.MerchantID, campaignID: camp.ID, validFrom: camp.ValidFrom,
		validTo: camp.ValidTo, now: now, refs: refs, perRef: total, fill: c.fillCodes}
	if batch.fill == nil {
		batch.fill = fillCouponCodes
	}
	chunk := c.chunk
	if chunk <= 0 {
		chunk = issueChunk
	}
	if len(refs) > 0 {
		batch.perRef = total / int64(len(refs))
	}
	res := &IssueResult{Issued: total}
	issue := func(tx *gorm.DB, copier *sql.Conn) error {
		ok, err := models.ReserveIssueBudget(tx, actor.MerchantID, camp.ID, total)
		if err != nil {
			return err
		}
		if !ok {
			return ErrIssueQuotaExceeded
		}
		for _, ref := range refs {
			if camp.PerCustomerLimit == 0 {
				break
			}
			ok, err := models.ReserveCustomerQuota(tx, actor.MerchantID, camp.ID, ref, batch.perRef, camp.PerCustomerLimit)
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
				err = copyCoupons(tx, copier, batch, start, codes)
			} else {
				err = insertCouponRange(tx, batch, start, codes)
			}
			if err != nil {
				return err
			}
			res.Codes = append(res.Codes, codes[:min(len(codes), MaxCodesReturned-len(res.Codes))]...)
		}
		return c.audit.record(tx, actor, "campaign.issue", fmt.Sprintf("campaign:%d", camp.ID),
			fmt.Sprintf("issued %d coupons", total), nil)
	}
	if models.DialectOfDB(c.db) == models.Postgres {
		// COPY needs the driver connection under the transaction, so the
		// transaction runs on a connection taken from the pool for it.
		err = db.Connection(func(cdb *gorm.DB) error {
			conn, _ := cdb.Statement.ConnPool.(*sql.Conn)
			if conn != nil && !speaksPgx(conn) {
				conn = nil
			}
			return cdb.Transaction(func(tx *gorm.DB) error { return issue(tx, conn) })
		})
	} else {
		err = db.Transaction(func(tx *gorm.DB) error { return issue(tx, nil) })
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

// couponBatch describes the coupons of one issuance; coupon i of the batch
// belongs to refs[i/perRef] when refs are given.
type couponBatch struct {
	merchantID, campaignID  int64
	validFrom, validTo, now time.Time
	refs                    []string
	perRef                  int64
	// fill draws fresh codes.
	fill func([]string)
}

func (b *couponBatch) ref(i int64) *string {
	if len(b.refs) == 0 {
		return nil
	}
	return &b.refs[i/b.perRef]
}

// codeAttempts bounds how often one chunk is redone after code collisions; a
// collision is about as likely as the chunk size times the merchant's codes
// over 2^60, so a second attempt is already rare.
const codeAttempts = 5

// insertCouponRange inserts coupons start to start+len(codes)-1 of b with
// fresh codes, written to codes, in batches of multi-row INSERTs inside one
// savepoint. It is the portable path: SQLite, or PostgreSQL through a driver
// other than pgx.
func insertCouponRange(tx *gorm.DB, b *couponBatch, start int64, codes []string) error {
	const perInsert = 1000
	rows := make([]models.Coupon, 0, min(len(codes), perInsert))
	var err error
	for attempt := 0; attempt < codeAttempts; attempt++ {
		b.fill(codes)
		err = tx.Transaction(func(sp *gorm.DB) error {
			for i := 0; i < len(codes); i += perInsert {
				rows = rows[:0]
				for j := i; j < min(i+perInsert, len(codes)); j++ {
					rows = append(rows, models.Coupon{MerchantID: b.merchantID, CampaignID: b.campaignID, Code: codes[j],
						Status: models.CouponUnused, ValidFrom: b.validFrom, ValidTo: b.validTo,
						CustomerRef: b.ref(start + int64(j)), CreatedAt: b.now, UpdatedAt: b.now})
				}
				if err := sp.Create(&rows).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return err
		}
	}
	return fmt.Errorf("insert coupons: codes kept colliding: %w", err)
}

// speaksPgx reports whether conn is a pgx connection, which copyCoupons needs.
func speaksPgx(conn *sql.Conn) bool {
	return conn.Raw(func(dc any) error {
		if _, ok := dc.(*stdlib.Conn); !ok {
			return errors.ErrUnsupported
		}
		return nil
	}) == nil
}

// couponColumns are the columns copyCoupons fills; the others keep their
// defaults (id from the sequence, version 0, no redemption, not a reissue).
var couponColumns = []string{"merchant_id", "campaign_id", "code", "status", "valid_from", "valid_to",
	"customer_ref", "created_at", "updated_at"}

// copyCoupons is insertCouponRange with COPY on PostgreSQL: conn is the
// connection tx runs on, and the rows are streamed to it in binary while
// they are generated. A unique violation on coupons can only be a code drawn
// twice or one the merchant already has (ids come from the sequence): the
// savepoint is rolled back and the chunk redone with fresh codes.
func copyCoupons(tx *gorm.DB, conn *sql.Conn, b *couponBatch, start int64, codes []string) error {
	ctx := tx.Statement.Context
	var err error
	for attempt := 0; attempt < codeAttempts; attempt++ {
		b.fill(codes)
		err = tx.Transaction(func(*gorm.DB) error {
			return conn.Raw(func(dc any) error {
				n, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"coupons"}, couponColumns,
					&couponRows{b: b, start: start, codes: codes, i: -1})
				if err == nil && n != int64(len(codes)) {
					err = fmt.Errorf("copied %d coupons, want %d", n, len(codes))
				}
				return err
			})
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != uniqueViolation || pgErr.TableName != "coupons" {
			return err
		}
	}
	return fmt.Errorf("copy coupons: codes kept colliding: %w", err)
}

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// couponRows is the pgx.CopyFromSource of one chunk. Values reuses one slice:
// pgx encodes a row before asking for the next.
type couponRows struct {
	b     *couponBatch
	start int64
	codes []string
	i     int
	vals  []any
}

func (r *couponRows) Next() bool {
	r.i++
	return r.i < len(r.codes)
}

func (r *couponRows) Values() ([]any, error) {
	if r.vals == nil {
		r.vals = []any{r.b.merchantID, r.b.campaignID, "", string(models.CouponUnused), r.b.validFrom, r.b.validTo,
			nil, r.b.now, r.b.now}
	}
	r.vals[2] = r.codes[r.i]
	if ref := r.b.ref(r.start + int64(r.i)); ref != nil {
		r.vals[6] = *ref
	}
	return r.vals, nil
}

func (r *couponRows) Err() error { return nil }

// insertCoupons gives each coupon a fresh code and inserts them in a
// savepoint; on the rare code collision they are retried with new codes.
func insertCoupons(tx *gorm.DB, batch []models.Coupon) error {
	var err error
	for attempt := 0; attempt < codeAttempts; attempt++ {
		for i := range batch {
			batch[i].ID = 0
			batch[i].Code = NewCouponCode()
		}
		err = tx.Transaction(func(sp *gorm.DB) error { return sp.CreateInBatches(batch, len(batch)).Error })
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return err
		}
	}
	return fmt.Errorf("insert coupons: codes kept colliding: %w", err)
}

// reissue issues a replacement for a refunded coupon on tx: same campaign and
// customer, a new code, linked to the old coupon. Replacements are counted in
// the campaign's reissued counter, outside its issue budget.
func (c *Campaigns) reissue(tx *gorm.DB, oldID int64, now time.Time) (*models.Coupon, error) {
	var old models.Coupon
	if err := tx.Take(&old, oldID).Error; err != nil {
		return nil, err
	}
	camp, err := c.cached(tx, old.CampaignID)
	if err != nil {
		return nil, err
	}
	if err := tx.Exec("UPDATE campaigns SET reissued = reissued + 1 WHERE id = ?", old.CampaignID).Error; err != nil {
		return nil, err
	}
	nc := []models.Coupon{{MerchantID: old.MerchantID, CampaignID: old.CampaignID, Status: models.CouponUnused,
		ValidFrom: camp.ValidFrom, ValidTo: camp.ValidTo, CustomerRef: old.CustomerRef, ReissuedFrom: &old.ID,
		CreatedAt: now, UpdatedAt: now}}
	if err := insertCoupons(tx, nc); err != nil {
		return nil, err
	}
	return &nc[0], nil
}

// cached returns a campaign's immutable rules.
func (c *Campaigns) cached(db *gorm.DB, id int64) (*models.Campaign, error) {
	if v, ok := c.byID.Load(id); ok {
		return v.(*models.Campaign), nil
	}
	var camp models.Campaign
	if err := db.Take(&camp, id).Error; err != nil {
		return nil, fmt.Errorf("find campaign %d: %w", id, err)
	}
	c.byID.Store(id, &camp)
	return &camp, nil
}

// ofCoupon returns the rules of a coupon's campaign.
func (c *Campaigns) ofCoupon(db *gorm.DB, couponID int64) (*models.Campaign, error) {
	var cp models.Coupon
	if err := db.Select("campaign_id").Take(&cp, couponID).Error; err != nil {
		return nil, fmt.Errorf("find coupon %d: %w", couponID, err)
	}
	return c.cached(db, cp.CampaignID)
}

// Get returns one campaign of the actor's merchant, with current counters.
func (c *Campaigns) Get(ctx context.Context, actor Actor, id int64) (*models.Campaign, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk); err != nil {
		return nil, err
	}
	var camp models.Campaign
	err := c.db.WithContext(ctx).Where("merchant_id = ? AND id = ?", actor.MerchantID, id).Take(&camp).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("campaign %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find campaign %d: %w", id, err)
	}
	return &camp, nil
}

// ByIDs returns the actor's campaigns among ids, for batch loaders.
func (c *Campaigns) ByIDs(ctx context.Context, actor Actor, ids []int64) ([]models.Campaign, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk); err != nil {
		return nil, err
	}
	var out []models.Campaign
	err := c.db.WithContext(ctx).Where("merchant_id = ? AND id IN ?", actor.MerchantID, ids).Find(&out).Error
	return out, err
}

// StoreIDs returns the stores a campaign is limited to, keyed by campaign id;
// a campaign valid at every store has no entry.
func (c *Campaigns) StoreIDs(ctx context.Context, actor Actor, campaignIDs []int64) (map[int64][]int64, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk); err != nil {
		return nil, err
	}
	var rows []models.CampaignStore
	err := c.db.WithContext(ctx).Where("merchant_id = ? AND campaign_id IN ?", actor.MerchantID, campaignIDs).
		Order("campaign_id, store_id").Find(&rows).Error
	out := make(map[int64][]int64)
	for _, r := range rows {
		out[r.CampaignID] = append(out[r.CampaignID], r.StoreID)
	}
	return out, err
}

// CampaignFilter narrows List.
type CampaignFilter struct {
	// ActiveAt keeps campaigns valid at that moment.
	ActiveAt *time.Time
}

// List returns the actor's campaigns, newest first.
func (c *Campaigns) List(ctx context.Context, actor Actor, f CampaignFilter, p PageArgs) (Page[models.Campaign], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk); err != nil {
		return Page[models.Campaign]{}, err
	}
	q := c.db.WithContext(ctx).Where("merchant_id = ?", actor.MerchantID)
	if f.ActiveAt != nil {
		q = q.Where("valid_from <= ? AND valid_to > ?", f.ActiveAt.UTC(), f.ActiveAt.UTC())
	}
	return paginate[models.Campaign](q, "campaigns", p)
}

// EachCode streams the codes of a campaign in issue order to fn, for the CSV
// export; administrators and finance staff only.
func (c *Campaigns) EachCode(ctx context.Context, actor Actor, campaignID int64, fn func(models.Coupon) error) error {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return err
	}
	if _, err := c.Get(ctx, actor, campaignID); err != nil {
		return err
	}
	var after int64
	for {
		var rows []models.Coupon
		err := c.db.WithContext(ctx).Where("merchant_id = ? AND campaign_id = ? AND id > ?", actor.MerchantID, campaignID, after).
			Order("id").Limit(5000).Find(&rows).Error
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < 5000 {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
}
