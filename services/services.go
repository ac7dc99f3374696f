package services

import (
	"log/slog"
	"time"

	"gorm.io/gorm"
)

// Options configures the services. The zero value of each field picks a default.
type Options struct {
	// Now is the clock; tests move it. Defaults to time.Now in UTC.
	Now func() time.Time
	// HoldTimeout is how long a redemption may stay PROCESSING (a coupon
	// REDEEMING) before compensation resolves it. Default 2 minutes.
	HoldTimeout time.Duration
	// FulfilTimeout bounds one call of the fulfillment adapter. Default 10 s.
	FulfilTimeout time.Duration
	// Fulfiller is the business system; nil selects the builtin adapter.
	Fulfiller Fulfiller
	// Logger receives the services' logs; nil discards them.
	Logger *slog.Logger
}

// Services bundles coupond's services over one database.
type Services struct {
	DB          *gorm.DB
	Redemptions *Redemptions
	Campaigns   *Campaigns
	Coupons     *Coupons
	Stores      *Stores
	Merchants   *Merchants
	Tokens      *Tokens
	Audit       *Audit
	Fulfiller   Fulfiller
}

// New wires the services over db.
func New(db *gorm.DB, o Options) *Services {
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	if o.HoldTimeout <= 0 {
		o.HoldTimeout = 2 * time.Minute
	}
	if o.FulfilTimeout <= 0 {
		o.FulfilTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Fulfiller == nil {
		o.Fulfiller = NewBuiltinFulfiller(db, o.Now)
	}
	audit := &Audit{db: db, now: o.Now}
	campaigns := &Campaigns{db: db, now: o.Now, audit: audit}
	return &Services{
		DB:        db,
		Audit:     audit,
		Campaigns: campaigns,
		Coupons:   &Coupons{db: db},
		Stores:    &Stores{db: db, now: o.Now, audit: audit},
		Merchants: &Merchants{db: db, now: o.Now},
		Tokens:    &Tokens{db: db, now: o.Now, audit: audit},
		Fulfiller: o.Fulfiller,
		Redemptions: &Redemptions{db: db, now: o.Now, holdTimeout: o.HoldTimeout, fulfilTimeout: o.FulfilTimeout,
			fulfiller: o.Fulfiller, campaigns: campaigns, log: o.Logger},
	}
}
