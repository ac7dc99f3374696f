package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"gorm.io/gorm"

	"coupond/models"
	"coupond/services"
)

// openDB opens and migrates the database.
func openDB(ctx context.Context, url string, opts models.OpenOptions) (*gorm.DB, error) {
	db, err := models.Open(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if _, err := models.Migrate(ctx, db); err != nil {
		_ = models.Close(db)
		return nil, err
	}
	return db, nil
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	dbURL := fs.databaseURL()
	if err := fs.parse(args); err != nil {
		return err
	}
	db, err := models.Open(ctx, *dbURL, models.OpenOptions{})
	if err != nil {
		return err
	}
	defer models.Close(db)
	applied, err := models.Migrate(ctx, db)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "database is up to date")
	}
	for _, v := range applied {
		fmt.Fprintf(stdout, "applied migration %05d\n", v)
	}
	return nil
}

func runMerchantCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merchant create", stderr)
	dbURL := fs.databaseURL()
	code := fs.FlagSet.String("code", "", "merchant code: lower-case letters, digits, _ or - (required)")
	name := fs.FlagSet.String("name", "", "display name")
	tz := fs.FlagSet.String("timezone", services.DefaultTimezone, "IANA time zone for statements")
	if err := fs.parse(args); err != nil {
		return err
	}
	db, err := openDB(ctx, *dbURL, models.OpenOptions{})
	if err != nil {
		return err
	}
	defer models.Close(db)
	m, err := services.New(db, services.Options{}).Merchants.Create(ctx, *code, *name, *tz)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created merchant %s (id %d, time zone %s)\n", m.Code, m.ID, m.Timezone)
	return nil
}

func runTokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("token create", stderr)
	dbURL := fs.databaseURL()
	merchant := fs.FlagSet.String("merchant", "", "merchant code (required)")
	role := fs.FlagSet.String("role", "", "ADMIN, CLERK or FINANCE (required)")
	name := fs.FlagSet.String("name", "", "a label for the token")
	var stores multiFlag
	fs.Var(&stores, "store", "store code a CLERK token is bound to (repeat for several)")
	if err := fs.parse(args); err != nil {
		return err
	}
	db, err := openDB(ctx, *dbURL, models.OpenOptions{})
	if err != nil {
		return err
	}
	defer models.Close(db)
	svc := services.New(db, services.Options{})
	m, err := svc.Merchants.ByCode(ctx, *merchant)
	if err != nil {
		return err
	}
	token, _, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.Role(*role),
		StoreCodes: stores, Name: *name})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, token)
	return nil
}

// runAudit runs every reconciliation check, prints each violation and fails
// when there is one.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit", stderr)
	dbURL := fs.databaseURL()
	hold := fs.Duration("hold-timeout", 2*time.Minute, "the servers' hold timeout, to tell stuck redemptions from live ones")
	every := fs.Duration("compensate-every", 30*time.Second, "the servers' compensation interval")
	external := fs.Bool("external-orders", false, "orders live in the merchant's system (the servers run --webhook-url): skip the checks against coupond's orders table")
	if err := fs.parse(args); err != nil {
		return err
	}
	db, err := openDB(ctx, *dbURL, models.OpenOptions{})
	if err != nil {
		return err
	}
	defer models.Close(db)
	svc := services.New(db, services.Options{HoldTimeout: *hold, CompensateEvery: *every, ExternalOrders: *external})
	start := time.Now()
	violations, err := svc.Reconciliation.Check(ctx)
	if err != nil {
		return err
	}
	for _, v := range violations {
		fmt.Fprintln(stdout, v.String())
	}
	if len(violations) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d invariant violations", len(violations))}
	}
	fmt.Fprintf(stdout, "no violations (checked in %s)\n", time.Since(start).Round(time.Millisecond))
	return nil
}
