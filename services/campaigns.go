package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"coupond/models"
)

// Campaigns creates campaigns (批次) and issues their coupons.
type Campaigns struct {
	db *gorm.DB
	// read serves the codes export: a read replica when there are any,
	// else db.
	read  *gorm.DB
	now   func() time.Time
	audit *Audit
	// tills paces the codes export beside the redemptions.
	tills *tills
	// byID caches campaigns for their benefit (type, value, caps, minimum
	// spend, stores), which never changes after creation; what does change
	// (counters, name, end, quantity, refund window, state) is never read
	// from it (see current).
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
	// PerCustomerLimit is one number with two uses: it caps the coupons one
	// customer reference may be issued (or imported for it), and the
	// successful, unrefunded uses one customer may make of the campaign's
	// coupons at redemption. 0 means no limit. With single-use coupons the
	// two agree (a customer's coupons are at most their uses); on a
	// multi-use campaign it counts uses, so it must be 0 or at least
	// UsesPerCoupon.
	PerCustomerLimit int64
	// CodeSource is where the codes come from; empty means GENERATED.
	CodeSource models.CodeSource
	// RequestID, optional, makes the call idempotent (see adminRequest).
	RequestID string
	// UsesPerCoupon is how many uses each coupon gives, 1 to
	// MaxUsesPerCoupon: more than 1 makes multi-use cards (次卡). nil means 1.
	UsesPerCoupon *int64
	// PerCustomerDailyLimit and PerStoreDailyLimit, optional and at least 1,
	// cap the uses per customer and per store per day (merchant time zone).
	PerCustomerDailyLimit *int64
	PerStoreDailyLimit    *int64
	// ValidDaysAfterIssue, optional and at least 1, ends each coupon's
	// validity that many days (of 24 hours) after its issue, never past
	// ValidTo.
	ValidDaysAfterIssue *int64
	// Weekdays, when not empty, are the local weekdays the coupons can be
	// used on.
	Weekdays []time.Weekday
	// DailyWindow, optional, is the local time of day the coupons can be
	// used in; From after To crosses midnight.
	DailyWindow *DailyWindow
	// Stackable lets the campaign's coupons share an order with other
	// coupons (redeemCoupons); an order takes at most one coupon of a
	// campaign that is not. Like the benefit, it never changes.
	Stackable bool
}

// DailyWindow is a time of day [From, To) in minutes after local midnight
// (0-1439). From after To crosses midnight; the part after midnight belongs
// to the day the window starts on (for the campaign's weekdays).
type DailyWindow struct{ From, To int64 }

// MaxUsesPerCoupon caps a multi-use card's uses.
const MaxUsesPerCoupon = 100

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
	switch in.CodeSource {
	case "":
		in.CodeSource = models.CodeGenerated
	case models.CodeGenerated, models.CodeImported:
	default:
		return nil, invalidf("codeSource must be GENERATED or IMPORTED")
	}
	params := []string{in.Name, string(in.Type),
		fmt.Sprint(in.Value, in.MaxDiscount, in.MinSpend, in.TotalQuantity, *in.RefundWindowMinutes, in.PerCustomerLimit),
		in.ValidFrom.UTC().Format(time.RFC3339Nano), in.ValidTo.UTC().Format(time.RFC3339Nano), fmt.Sprint(in.StoreIDs),
		fmt.Sprint("uses=", *in.UsesPerCoupon),
		fmt.Sprint("limits=", deref(in.PerCustomerDailyLimit), deref(in.PerStoreDailyLimit)),
		fmt.Sprint("time=", deref(in.ValidDaysAfterIssue), in.Weekdays, deref(in.DailyWindow))}
	if in.CodeSource != models.CodeGenerated {
		// Only when not the default, so earlier requests keep their fingerprints.
		params = append(params, string(in.CodeSource))
	}
	if in.Stackable {
		// Likewise.
		params = append(params, "stackable")
	}
	req, err := newAdminRequest(actor, "createCampaign", in.RequestID, params...)
	if err != nil {
		return nil, err
	}
	db := c.db.WithContext(ctx)
	var prior models.Campaign
	if ok, err := req.replayed(db, &prior); err != nil {
		return nil, err
	} else if ok {
		return &prior, nil
	}
	camp := &models.Campaign{MerchantID: actor.MerchantID, Name: in.Name, Type: in.Type, Value: in.Value,
		MaxDiscount: in.MaxDiscount, MinSpend: in.MinSpend, ValidFrom: in.ValidFrom.UTC(), ValidTo: in.ValidTo.UTC(),
		AllStores: len(in.StoreIDs) == 0, TotalQuantity: in.TotalQuantity, PerCustomerLimit: in.PerCustomerLimit,
		RefundWindowMinutes: *in.RefundWindowMinutes, State: models.CampaignActive, CodeSource: in.CodeSource, CreatedAt: c.now(),
		UsesPerCoupon: *in.UsesPerCoupon, PerCustomerDailyLimit: deref(in.PerCustomerDailyLimit),
		PerStoreDailyLimit: deref(in.PerStoreDailyLimit), ValidDaysAfterIssue: deref(in.ValidDaysAfterIssue),
		Stackable: in.Stackable}
	for _, d := range in.Weekdays {
		camp.Weekdays |= models.WeekdayBit(d)
	}
	if w := in.DailyWindow; w != nil {
		camp.WindowFrom, camp.WindowTo = w.From, w.To
	}
	err = db.Transaction(func(tx *gorm.DB) error {
		for _, id := range in.StoreIDs {
			if err := storeMustExist(tx, actor.MerchantID, id); err != nil {
				return err
			}
		}
		if err := models.InsertCampaign(tx, camp, in.StoreIDs); err != nil {
			return err
		}
		if err := c.audit.record(tx, actor, "campaign.create", fmt.Sprintf("campaign:%d", camp.ID), camp.Name, nil); err != nil {
			return err
		}
		return req.record(tx, camp, camp.CreatedAt)
	})
	if err != nil && req != nil {
		// A concurrent copy of the request may have committed first.
		if ok, err := req.replayed(db, &prior); err != nil {
			return nil, err
		} else if ok {
			return &prior, nil
		}
	}
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
	if in.UsesPerCoupon == nil {
		one := int64(1)
		in.UsesPerCoupon = &one
	}
	if *in.UsesPerCoupon < 1 || *in.UsesPerCoupon > MaxUsesPerCoupon {
		return invalidf("usesPerCoupon must be between 1 and %d", MaxUsesPerCoupon)
	}
	if *in.UsesPerCoupon > 1 && in.PerCustomerLimit > 0 && in.PerCustomerLimit < *in.UsesPerCoupon {
		// One field caps both issuance and uses (the issue's contract): a
		// limit below one card's uses would stop a customer partway through
		// their own card.
		return invalidf("perCustomerLimit caps a customer's uses as well as their coupons: with usesPerCoupon %d it must be 0 or at least %d",
			*in.UsesPerCoupon, *in.UsesPerCoupon)
	}
	if in.PerCustomerDailyLimit != nil && *in.PerCustomerDailyLimit < 1 {
		return invalidf("perCustomerDailyLimit must be at least 1 (omit it for no limit)")
	}
	if in.PerStoreDailyLimit != nil && *in.PerStoreDailyLimit < 1 {
		return invalidf("perStoreDailyLimit must be at least 1 (omit it for no limit)")
	}
	if in.ValidDaysAfterIssue != nil && (*in.ValidDaysAfterIssue < 1 || *in.ValidDaysAfterIssue > 3660) {
		return invalidf("validDaysAfterIssue must be between 1 and 3660 (omit it to use validTo)")
	}
	for i, d := range in.Weekdays {
		if d < time.Sunday || d > time.Saturday || slices.Contains(in.Weekdays[:i], d) {
			return invalidf("weekdays must name each day once")
		}
	}
	if w := in.DailyWindow; w != nil {
		switch {
		case w.From < 0 || w.From >= 24*60 || w.To < 0 || w.To >= 24*60:
			return invalidf("dailyWindow from and to must be times of day, HH:MM")
		case w.From == w.To:
			return invalidf("dailyWindow from and to must differ (omit dailyWindow for all day)")
		}
	}
	return nil
}

// cached returns a campaign's immutable rules.
func (c *Campaigns) cached(db *gorm.DB, id int64) (*models.Campaign, error) {
	if v, ok := c.byID.Load(id); ok {
		return v.(*models.Campaign), nil
	}
	camp, err := models.CampaignAt(db, id)
	if err != nil {
		return nil, fmt.Errorf("find campaign %d: %w", id, err)
	}
	c.byID.Store(id, camp)
	return camp, nil
}

// current reads a campaign as it is now, for the rules that change (state,
// end, refund window); cached is for the benefit, which never does.
func (c *Campaigns) current(db *gorm.DB, id int64) (*models.Campaign, error) {
	camp, err := models.CampaignAt(db, id)
	if err != nil {
		return nil, fmt.Errorf("find campaign %d: %w", id, err)
	}
	return camp, nil
}

// ofCoupon returns a coupon's campaign as it is now.
func (c *Campaigns) ofCoupon(db *gorm.DB, couponID int64) (*models.Campaign, error) {
	id, err := models.CampaignIDOfCoupon(db, couponID)
	if err != nil {
		return nil, fmt.Errorf("find coupon %d: %w", couponID, err)
	}
	return c.current(db, id)
}

// Get returns one campaign of the actor's merchant, with current counters.
func (c *Campaigns) Get(ctx context.Context, actor Actor, id int64) (*models.Campaign, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk); err != nil {
		return nil, err
	}
	camp, err := models.CampaignByID(c.db.WithContext(ctx), actor.MerchantID, id)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("campaign %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find campaign %d: %w", id, err)
	}
	return camp, nil
}

// ByIDs returns the actor's campaigns among ids, for batch loaders; a
// mini-program (APP) shows its customers' coupons with their campaigns.
func (c *Campaigns) ByIDs(ctx context.Context, actor Actor, ids []int64) ([]models.Campaign, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk, models.RoleApp); err != nil {
		return nil, err
	}
	return models.CampaignsByIDs(c.db.WithContext(ctx), actor.MerchantID, ids)
}

// StoreIDs returns the stores a campaign is limited to, keyed by campaign id;
// a campaign valid at every store has no entry.
func (c *Campaigns) StoreIDs(ctx context.Context, actor Actor, campaignIDs []int64) (map[int64][]int64, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk, models.RoleApp); err != nil {
		return nil, err
	}
	return models.CampaignStoreIDs(c.db.WithContext(ctx), actor.MerchantID, campaignIDs)
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
	return paginate[models.Campaign](models.MerchantCampaigns(c.db.WithContext(ctx), actor.MerchantID, f.ActiveAt), "campaigns", p)
}

// ParseDailyWindow reads a daily window given as two HH:MM times of day;
// a malformed time is BAD_USER_INPUT naming dailyWindow. (from == to is
// refused by Create.)
func ParseDailyWindow(from, to string) (*DailyWindow, error) {
	parse := func(s string) (int64, bool) {
		t, err := time.Parse("15:04", s)
		if err != nil || len(s) != 5 {
			return 0, false
		}
		return int64(t.Hour()*60 + t.Minute()), true
	}
	f, okF := parse(from)
	t, okT := parse(to)
	if !okF || !okT {
		return nil, invalidf("dailyWindow from and to must be times of day, HH:MM (00:00 to 23:59)")
	}
	return &DailyWindow{From: f, To: t}, nil
}

// FormatTimeOfDay writes minutes after midnight as HH:MM.
func FormatTimeOfDay(minutes int64) string { return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60) }
