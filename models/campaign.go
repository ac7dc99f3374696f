package models

import (
	"time"

	"gorm.io/gorm"
)

// CampaignType is the kind of benefit a campaign's coupons carry.
type CampaignType string

// Campaign types.
const (
	CampaignCash     CampaignType = "CASH"
	CampaignDiscount CampaignType = "DISCOUNT"
	CampaignExchange CampaignType = "EXCHANGE"
)

// CampaignState says whether a campaign's coupons may be issued and taken.
type CampaignState string

// Campaign states. A PAUSED campaign issues nothing and its coupons are
// rejected (CAMPAIGN_PAUSED) until it resumes; an ENDED one is over for good,
// its validity cut to the moment it ended.
const (
	CampaignActive CampaignState = "ACTIVE"
	CampaignPaused CampaignState = "PAUSED"
	CampaignEnded  CampaignState = "ENDED"
)

// Campaign is a batch of coupons with one benefit and one set of rules. Its
// benefit (type, value, caps, minimum spend, stores) never changes; its name,
// end, quantity, refund window and state change under optimistic locking
// (Version).
type Campaign struct {
	ID                  int64
	MerchantID          int64
	Name                string
	Type                CampaignType
	Value               int64
	MaxDiscount         int64
	MinSpend            int64
	ValidFrom           time.Time
	ValidTo             time.Time
	AllStores           bool
	TotalQuantity       int64
	Issued              int64
	Reissued            int64
	PerCustomerLimit    int64
	RefundWindowMinutes int64
	// UsesPerCoupon is how many uses each coupon gives: 1, or up to 100 for
	// a multi-use card (次卡).
	UsesPerCoupon int64 `gorm:"default:1"`
	// PerCustomerDailyLimit and PerStoreDailyLimit cap the uses of the
	// campaign's coupons per customer and per store per day, in the
	// merchant's time zone; 0 means no limit. PerCustomerLimit also caps a
	// customer's uses over the campaign at redemption.
	PerCustomerDailyLimit int64
	PerStoreDailyLimit    int64
	// ValidDaysAfterIssue, when not 0, ends each coupon's validity that many
	// days (of 24 hours) after it is issued, never past ValidTo.
	ValidDaysAfterIssue int64
	// Weekdays is the set of local weekdays the coupons can be used on, one
	// bit each (WeekdayBit); 0 means every day.
	Weekdays int64
	// WindowFrom and WindowTo are the local minutes of the day [from, to)
	// the coupons can be used in; equal means all day. A window with from
	// after to crosses midnight and belongs to the day it starts on.
	WindowFrom int64
	WindowTo   int64
	Version    int64
	State      CampaignState
	CreatedAt  time.Time
}

// CampaignStore scopes a campaign to one store; a campaign without rows here and
// with AllStores set is valid everywhere.
type CampaignStore struct {
	MerchantID int64
	CampaignID int64 `gorm:"primaryKey;autoIncrement:false"`
	StoreID    int64 `gorm:"primaryKey;autoIncrement:false"`
}

// CountsAllowances reports whether a use of the campaign's coupons by
// customer ("" for none) counts against a limit at redemption (see
// TakeAllowances): a per-store daily limit always does, per-customer limits
// when there is a customer. noAllowancesSQL is the same rule in SQL.
func (c *Campaign) CountsAllowances(customer string) bool {
	return c.PerStoreDailyLimit > 0 || (customer != "" && (c.PerCustomerLimit > 0 || c.PerCustomerDailyLimit > 0))
}

// noAllowancesSQL holds when a use of coupons' row by customer (a text
// parameter reference, an empty string for none) counts against no limit of campaign
// row k: the negation of Campaign.CountsAllowances, the customer being the
// coupon's own when it was issued to one.
func noAllowancesSQL(k, customer string) string {
	return `(` + k + `.per_store_daily_limit = 0 AND ((` + k + `.per_customer_limit = 0 AND ` + k + `.per_customer_daily_limit = 0)
    OR (coupons.customer_ref IS NULL AND ` + customer + ` = '')))`
}

// WeekdayBit is weekday d's bit in Campaign.Weekdays: Monday 1, Tuesday 2,
// ... Sunday 64.
func WeekdayBit(d time.Weekday) int64 { return 1 << ((int(d) + 6) % 7) }

// LocalClock is a request's instant on the merchant's clock: the bits of
// today's and yesterday's weekday and the minute of the day.
type LocalClock struct {
	Day, PrevDay, Minute int64
}

// ClockOf is t (in the merchant's location) as a LocalClock.
func ClockOf(t time.Time) LocalClock {
	return LocalClock{Day: WeekdayBit(t.Weekday()), PrevDay: WeekdayBit(t.AddDate(0, 0, -1).Weekday()),
		Minute: int64(t.Hour()*60 + t.Minute())}
}

// TimeRule judges the campaign's weekday and time-of-day rules at k:
// inHours is false outside the daily window; dayOK is false when the day
// the use belongs to (today, or yesterday inside the after-midnight part of
// a window that crosses midnight) is not one of the weekdays. The coupon can
// be used when both hold. timeRuleSQL is the same rule in SQL;
// TestEligibilityExplained holds them together on both databases.
func (c *Campaign) TimeRule(k LocalClock) (dayOK, inHours bool) {
	on := func(bit int64) bool { return c.Weekdays == 0 || c.Weekdays&bit != 0 }
	switch {
	case c.WindowFrom == c.WindowTo:
		return on(k.Day), true
	case c.WindowFrom < c.WindowTo:
		return on(k.Day), k.Minute >= c.WindowFrom && k.Minute < c.WindowTo
	case k.Minute >= c.WindowFrom:
		return on(k.Day), true
	case k.Minute < c.WindowTo:
		return on(k.PrevDay), true
	default:
		return on(k.Day), false
	}
}

// timeRuleSQL holds when campaign row k's weekday and time-of-day rules let
// a coupon be used at the clock row clk (columns d, p, m: LocalClock's Day,
// PrevDay and Minute).
func timeRuleSQL(k, clk string) string {
	on := func(bit string) string { return `(` + k + `.weekdays = 0 OR (` + k + `.weekdays & ` + bit + `) <> 0)` }
	return `(CASE WHEN ` + k + `.window_from = ` + k + `.window_to THEN ` + on(clk+".d") + `
    WHEN ` + k + `.window_from < ` + k + `.window_to THEN ` + clk + `.m >= ` + k + `.window_from AND ` + clk + `.m < ` + k + `.window_to AND ` + on(clk+".d") + `
    WHEN ` + clk + `.m >= ` + k + `.window_from THEN ` + on(clk+".d") + `
    WHEN ` + clk + `.m < ` + k + `.window_to THEN ` + on(clk+".p") + `
    ELSE 1 = 0 END)`
}

// Discount is what a coupon of campaign c takes off an order of orderAmount
// fen: CASH takes its value off, at most the amount; DISCOUNT takes value
// percent, truncated, capped by MaxDiscount when set; EXCHANGE is worth its
// value. discountSQL is the same rule in SQL; TestDiscountSQL holds the two
// together on both databases.
func (c *Campaign) Discount(orderAmount int64) int64 {
	switch c.Type {
	case CampaignCash:
		return min(c.Value, orderAmount)
	case CampaignDiscount:
		d := orderAmount * c.Value / 100
		if c.MaxDiscount > 0 {
			d = min(d, c.MaxDiscount)
		}
		return d
	default:
		return c.Value
	}
}

// discountSQL is Campaign.Discount in SQL, for the campaign row k and the
// order amount amount (a parameter reference such as $5).
func discountSQL(k, amount string) string {
	return `CASE ` + k + `.type WHEN 'CASH' THEN LEAST(` + k + `.value, ` + amount + `)
  WHEN 'DISCOUNT' THEN CASE WHEN ` + k + `.max_discount > 0 THEN LEAST(` + amount + ` * ` + k + `.value / 100, ` + k + `.max_discount)
    ELSE ` + amount + ` * ` + k + `.value / 100 END
  ELSE ` + k + `.value END`
}

// ReserveIssueBudget takes n coupons from a campaign's budget in one conditional
// update; it reports false when fewer than n remain or the campaign is not
// ACTIVE.
func ReserveIssueBudget(tx *gorm.DB, merchantID, campaignID, n int64) (bool, error) {
	res := tx.Exec(`UPDATE campaigns SET issued = issued + ?
WHERE id = ? AND merchant_id = ? AND issued + ? <= total_quantity AND state = 'ACTIVE'`,
		n, campaignID, merchantID, n)
	return res.RowsAffected == 1, res.Error
}

// ReserveCustomerQuota takes n coupons from one customer's per-campaign limit
// with one upsert that only applies while the limit holds; it reports false when
// the customer would exceed limit.
func ReserveCustomerQuota(tx *gorm.DB, merchantID, campaignID int64, customerRef string, n, limit int64) (bool, error) {
	if n > limit {
		return false, nil
	}
	res := tx.Exec(`INSERT INTO campaign_customers (merchant_id, campaign_id, customer_ref, issued) VALUES (?, ?, ?, ?)
ON CONFLICT (campaign_id, customer_ref) DO UPDATE SET issued = campaign_customers.issued + excluded.issued
WHERE campaign_customers.issued + excluded.issued <= ?`, merchantID, campaignID, customerRef, n, limit)
	return res.RowsAffected == 1, res.Error
}

// CampaignHasStore reports whether store storeID is in the store list of
// campaign campaignID.
func CampaignHasStore(db *gorm.DB, campaignID, storeID int64) (bool, error) {
	var n int64
	err := db.Model(&CampaignStore{}).Where("campaign_id = ? AND store_id = ?", campaignID, storeID).Count(&n).Error
	return n > 0, err
}

// DiscountInSQL evaluates discountSQL for campaign c and orderAmount on db,
// so tests can hold it to Campaign.Discount. PostgreSQL only: SQLite never
// runs discountSQL.
func DiscountInSQL(db *gorm.DB, c Campaign, orderAmount int64) (int64, error) {
	var d int64
	err := db.Raw(`SELECT `+discountSQL("k", "$4::bigint")+` FROM (SELECT $1::text AS type, $2::bigint AS value,
  $3::bigint AS max_discount) k`, string(c.Type), c.Value, c.MaxDiscount, orderAmount).Scan(&d).Error
	return d, err
}

// InsertCampaign inserts a campaign, limited to storeIDs when any are
// given, and sets its ID.
func InsertCampaign(tx *gorm.DB, c *Campaign, storeIDs []int64) error {
	if err := tx.Create(c).Error; err != nil {
		return err
	}
	for _, id := range storeIDs {
		if err := tx.Create(&CampaignStore{MerchantID: c.MerchantID, CampaignID: c.ID, StoreID: id}).Error; err != nil {
			return err
		}
	}
	return nil
}

// CountReissue adds one replacement coupon to a campaign's reissued
// counter, which is outside its issue budget.
func CountReissue(tx *gorm.DB, campaignID int64) error {
	return tx.Exec("UPDATE campaigns SET reissued = reissued + 1 WHERE id = ?", campaignID).Error
}

// CampaignChange is what an admin changes of a campaign; nil fields stay.
type CampaignChange struct {
	Name                *string
	ValidTo             *time.Time
	TotalQuantity       *int64
	RefundWindowMinutes *int64
	State               *CampaignState
}

// UpdateCampaign applies change to the merchant's campaign if it is still
// at version, with one update WHERE id = ? AND version = ? (optimistic
// locking), and moves the version on. It reports false, having written
// nothing, when the version is stale or the campaign is not the merchant's.
// A totalQuantity below what was issued fails the table's check and writes
// nothing. With from set, the campaign must also be in one of those states.
func UpdateCampaign(tx *gorm.DB, merchantID, id, version int64, change CampaignChange, from ...CampaignState) (bool, error) {
	set := map[string]any{"version": gorm.Expr("version + 1")}
	if change.Name != nil {
		set["name"] = *change.Name
	}
	if change.ValidTo != nil {
		set["valid_to"] = *change.ValidTo
	}
	if change.TotalQuantity != nil {
		set["total_quantity"] = *change.TotalQuantity
	}
	if change.RefundWindowMinutes != nil {
		set["refund_window_minutes"] = *change.RefundWindowMinutes
	}
	if change.State != nil {
		set["state"] = string(*change.State)
	}
	q := tx.Model(&Campaign{}).Where("id = ? AND merchant_id = ? AND version = ?", id, merchantID, version)
	if change.TotalQuantity != nil {
		q = q.Where("issued <= ?", *change.TotalQuantity)
	}
	if len(from) > 0 {
		states := make([]string, len(from))
		for i, s := range from {
			states[i] = string(s)
		}
		q = q.Where("state IN ?", states)
	}
	res := q.Updates(set)
	return res.RowsAffected == 1, res.Error
}

// CampaignByID returns the merchant's campaign, or gorm.ErrRecordNotFound.
func CampaignByID(db *gorm.DB, merchantID, id int64) (*Campaign, error) {
	var c Campaign
	if err := db.Where("id = ? AND merchant_id = ?", id, merchantID).Take(&c).Error; err != nil {
		return nil, err
	}
	return &c, nil
}

// CampaignAt returns the campaign with id, whoever's it is (callers reach it
// through a row of the merchant's), or gorm.ErrRecordNotFound.
func CampaignAt(db *gorm.DB, id int64) (*Campaign, error) {
	var c Campaign
	if err := db.Take(&c, id).Error; err != nil {
		return nil, err
	}
	return &c, nil
}

// CampaignIDOfCoupon returns the campaign of the coupon with id.
func CampaignIDOfCoupon(db *gorm.DB, couponID int64) (int64, error) {
	var c Coupon
	err := db.Select("campaign_id").Take(&c, couponID).Error
	return c.CampaignID, err
}

// CampaignsByIDs returns the merchant's campaigns among ids.
func CampaignsByIDs(db *gorm.DB, merchantID int64, ids []int64) ([]Campaign, error) {
	var out []Campaign
	return out, db.Where("merchant_id = ? AND id IN ?", merchantID, ids).Find(&out).Error
}

// CampaignStoreIDs returns the stores each of the merchant's campaigns
// among campaignIDs is limited to; a campaign valid everywhere has none.
func CampaignStoreIDs(db *gorm.DB, merchantID int64, campaignIDs []int64) (map[int64][]int64, error) {
	var rows []CampaignStore
	err := db.Where("merchant_id = ? AND campaign_id IN ?", merchantID, campaignIDs).
		Order("campaign_id, store_id").Find(&rows).Error
	out := make(map[int64][]int64)
	for _, r := range rows {
		out[r.CampaignID] = append(out[r.CampaignID], r.StoreID)
	}
	return out, err
}

// MerchantCampaigns is the query of the merchant's campaigns, valid at
// activeAt when it is not nil, for paging.
func MerchantCampaigns(db *gorm.DB, merchantID int64, activeAt *time.Time) *gorm.DB {
	q := db.Model(&Campaign{}).Where("merchant_id = ?", merchantID)
	if activeAt != nil {
		q = q.Where("valid_from <= ? AND valid_to > ?", activeAt.UTC(), activeAt.UTC())
	}
	return q
}
