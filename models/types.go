package models

import "time"

// CouponStatus is a state of the coupon state machine.
type CouponStatus string

// Coupon states. REFUNDED and EXPIRED are terminal.
const (
	CouponUnused    CouponStatus = "UNUSED"
	CouponRedeeming CouponStatus = "REDEEMING"
	CouponRedeemed  CouponStatus = "REDEEMED"
	CouponRefunded  CouponStatus = "REFUNDED"
	CouponExpired   CouponStatus = "EXPIRED"
)

// FlowStatus is the state of a redemption flow.
type FlowStatus string

// Redemption flow states. Only PROCESSING moves; the others are final.
const (
	FlowProcessing FlowStatus = "PROCESSING"
	FlowSucceeded  FlowStatus = "SUCCEEDED"
	FlowRejected   FlowStatus = "REJECTED"
	FlowReleased   FlowStatus = "RELEASED"
)

// Operation distinguishes the requests that create a redemption flow; request
// ids are unique per merchant and operation.
type Operation string

// Operations that create redemption flows.
const (
	OpRedeem  Operation = "REDEEM"
	OpReserve Operation = "RESERVE"
)

// CampaignType is the kind of benefit a campaign's coupons carry.
type CampaignType string

// Campaign types.
const (
	CampaignCash     CampaignType = "CASH"
	CampaignDiscount CampaignType = "DISCOUNT"
	CampaignExchange CampaignType = "EXCHANGE"
)

// Role is what an API token may do.
type Role string

// Roles.
const (
	RoleAdmin   Role = "ADMIN"
	RoleClerk   Role = "CLERK"
	RoleFinance Role = "FINANCE"
)

// OrderStatus is the state of an order of the builtin fulfillment adapter.
type OrderStatus string

// Order states. A CANCELLED row written before any order existed fences the
// redemption number: a later Fulfil for it is refused.
const (
	OrderCreated   OrderStatus = "CREATED"
	OrderCancelled OrderStatus = "CANCELLED"
)

// Merchant is a tenant: a chain of stores.
type Merchant struct {
	ID        int64
	Code      string
	Name      string
	Timezone  string
	CreatedAt time.Time
}

// Store is one shop of a merchant.
type Store struct {
	ID         int64
	MerchantID int64
	Code       string
	Name       string
	CreatedAt  time.Time
}

// Campaign is a batch of coupons with one benefit and one set of rules.
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
	CreatedAt           time.Time
}

// CampaignStore scopes a campaign to one store; a campaign without rows here and
// with AllStores set is valid everywhere.
type CampaignStore struct {
	MerchantID int64
	CampaignID int64 `gorm:"primaryKey;autoIncrement:false"`
	StoreID    int64 `gorm:"primaryKey;autoIncrement:false"`
}

// Coupon is one code of a campaign.
type Coupon struct {
	ID           int64
	MerchantID   int64
	CampaignID   int64
	Code         string
	Status       CouponStatus
	Version      int64
	ValidFrom    time.Time
	ValidTo      time.Time
	CustomerRef  *string
	RedeemNo     *string
	ReissuedFrom *int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// RedemptionFlow is the ledger row of one redemption attempt: the idempotency
// anchor and what finance reconciles against. It is never deleted.
type RedemptionFlow struct {
	ID             int64
	MerchantID     int64
	RedeemNo       string
	Operation      Operation
	RequestID      string
	Fingerprint    string
	CouponID       int64
	StoreID        int64
	OperatorID     *int64
	Status         FlowStatus
	RejectReason   *string
	ReleaseReason  *string
	OrderAmount    int64
	DiscountAmount int64
	OrderRef       *string
	HoldUntil      *time.Time
	Attempts       int64
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	FinishedAt     *time.Time
}

// RefundFlow is the ledger row of one refund of a redemption.
type RefundFlow struct {
	ID               int64
	MerchantID       int64
	RefundNo         string
	RequestID        string
	Fingerprint      string
	RedemptionID     int64
	RedeemNo         string
	CouponID         int64
	StoreID          int64
	OperatorID       *int64
	Status           FlowStatus
	Reason           string
	Amount           int64
	Reissue          bool
	ReissuedCouponID *int64
	CreatedAt        time.Time
	FinishedAt       *time.Time
}

// CouponTransition records one edge taken by a coupon; it is append-only, and a
// coupon's version equals the number of its transitions.
type CouponTransition struct {
	ID           int64
	MerchantID   int64
	CouponID     int64
	FromStatus   CouponStatus
	ToStatus     CouponStatus
	VersionAfter int64
	FlowNo       string
	Actor        string
	StoreID      *int64
	CreatedAt    time.Time
}

// Order is the business result of a one-shot redemption in the builtin
// fulfillment adapter, keyed by redemption number.
type Order struct {
	ID          int64
	MerchantID  int64
	RedeemNo    string
	CouponID    *int64
	StoreID     *int64
	Amount      int64
	Status      OrderStatus
	CreatedAt   time.Time
	CancelledAt *time.Time
}

// APIToken is an opaque bearer token, stored only as its SHA-256 hash.
type APIToken struct {
	ID         int64
	MerchantID int64
	Name       string
	Role       Role
	TokenHash  string
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

// APITokenStore binds a clerk token to a store.
type APITokenStore struct {
	TokenID int64 `gorm:"primaryKey;autoIncrement:false"`
	StoreID int64 `gorm:"primaryKey;autoIncrement:false"`
}

// AuditEvent records who did what to which row; it is append-only.
type AuditEvent struct {
	ID         int64
	MerchantID int64
	Actor      string
	Action     string
	Target     string
	Detail     string
	RequestID  *string
	CreatedAt  time.Time
}
