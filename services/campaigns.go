package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
		stores := &Stores{db: c.db}
		for _, id := range in.StoreIDs {
			if err := stores.mustExist(tx, actor.MerchantID, id); err != nil {
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

const issueBatch = 1000

// IssueCoupons issues coupons in one transaction: the campaign's budget is taken
// by one conditional update, so concurrent issuances can never pass the total
// (QUOTA_EXCEEDED), and per-customer limits the same way
// (CUSTOMER_LIMIT_EXCEEDED). Administrators only.
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
	res := &IssueResult{Issued: total}
	err = db.Transaction(func(tx *gorm.DB) error {
		ok, err := models.ReserveIssueBudget(tx, actor.MerchantID, camp.ID, total)
		if err != nil {
			return err
		}
		if !ok {
			return ErrIssueQuotaExceeded
		}
		perRef := total
		if len(refs) > 0 {
			perRef = total / int64(len(refs))
		}
		for _, ref := range refs {
			if camp.PerCustomerLimit == 0 {
				break
			}
			ok, err := models.ReserveCustomerQuota(tx, actor.MerchantID, camp.ID, ref, perRef, camp.PerCustomerLimit)
			if err != nil {
				return err
			}
			if !ok {
				return ErrCustomerLimitExceeded
			}
		}
		batch := make([]models.Coupon, 0, issueBatch)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			if err := insertCoupons(tx, batch); err != nil {
				return err
			}
			for i := 0; i < len(batch) && len(res.Codes) < MaxCodesReturned; i++ {
				res.Codes = append(res.Codes, batch[i].Code)
			}
			batch = batch[:0]
			return nil
		}
		for i := int64(0); i < total; i++ {
			cp := models.Coupon{MerchantID: actor.MerchantID, CampaignID: camp.ID, Status: models.CouponUnused,
				ValidFrom: camp.ValidFrom, ValidTo: camp.ValidTo, CreatedAt: now, UpdatedAt: now}
			if len(refs) > 0 {
				ref := refs[i/perRef]
				cp.CustomerRef = &ref
			}
			batch = append(batch, cp)
			if len(batch) == issueBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		return c.audit.record(tx, actor, "campaign.issue", fmt.Sprintf("campaign:%d", camp.ID),
			fmt.Sprintf("issued %d coupons", total), nil)
	})
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

// insertCoupons gives each coupon a fresh code and inserts the batch in a
// savepoint; on the rare code collision the batch is retried with new codes.
func insertCoupons(tx *gorm.DB, batch []models.Coupon) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
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
