package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gorm.io/gorm"

	"coupond/models"
	"coupond/services"
)

// openMerchant opens and migrates the database, and returns the services
// over it and the merchant with the code; done closes the database.
func openMerchant(ctx context.Context, url, code string) (*services.Services, *models.Merchant, func(), error) {
	db, err := openDB(ctx, url, models.OpenOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	svc := services.New(db, services.Options{})
	m, err := svc.Merchants.ByCode(ctx, code)
	if err != nil {
		_ = models.Close(db)
		return nil, nil, nil, err
	}
	return svc, m, func() { _ = models.Close(db) }, nil
}

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
	role := fs.FlagSet.String("role", "", "ADMIN, CLERK, FINANCE or APP (required)")
	name := fs.FlagSet.String("name", "", "a label for the token")
	var stores multiFlag
	fs.Var(&stores, "store", "store code a CLERK token is bound to (repeat for several)")
	expiresIn := fs.FlagSet.Duration("expires-in", 0, "the token stops working this long after now, e.g. 720h (0: never)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *expiresIn < 0 {
		return fmt.Errorf("--expires-in must not be negative")
	}
	svc, m, done, err := openMerchant(ctx, *dbURL, *merchant)
	if err != nil {
		return err
	}
	defer done()
	in := services.CreateTokenInput{MerchantID: m.ID, Role: models.Role(*role), StoreCodes: stores, Name: *name}
	if *expiresIn > 0 {
		exp := time.Now().UTC().Add(*expiresIn)
		in.ExpiresAt = &exp
	}
	token, _, err := svc.Tokens.Create(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, token)
	return nil
}

// runTokenList prints a merchant's tokens, newest first, one a line.
func runTokenList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("token list", stderr)
	dbURL := fs.databaseURL()
	merchant := fs.FlagSet.String("merchant", "", "merchant code (required)")
	if err := fs.parse(args); err != nil {
		return err
	}
	svc, m, done, err := openMerchant(ctx, *dbURL, *merchant)
	if err != nil {
		return err
	}
	defer done()
	actor := services.SystemActor(m.ID)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tSTORES\tCREATED\tEXPIRES\tLAST USED\tREVOKED")
	page := services.PageArgs{First: services.MaxPageSize}
	for {
		toks, err := svc.Tokens.List(ctx, actor, page)
		if err != nil {
			return err
		}
		ids := make([]int64, len(toks.Items))
		for i, t := range toks.Items {
			ids[i] = t.ID
		}
		stores, err := svc.Tokens.StoreIDs(ctx, actor, ids)
		if err != nil {
			return err
		}
		for _, t := range toks.Items {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.Role, storeList(stores[t.ID]),
				cliTime(&t.CreatedAt), cliTime(t.ExpiresAt), cliTime(t.LastUsedAt), cliTime(t.RevokedAt))
		}
		if !toks.HasNextPage {
			break
		}
		page.After = services.EncodeCursor(toks.Items[len(toks.Items)-1].ID)
	}
	return tw.Flush()
}

// runTokenRevoke revokes a token of a merchant; revoking it again is not an
// error.
func runTokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("token revoke", stderr)
	dbURL := fs.databaseURL()
	merchant := fs.FlagSet.String("merchant", "", "merchant code (required)")
	id := fs.FlagSet.Int64("id", 0, "the token's id, as token list prints it (required)")
	if err := fs.parse(args); err != nil {
		return err
	}
	svc, m, done, err := openMerchant(ctx, *dbURL, *merchant)
	if err != nil {
		return err
	}
	defer done()
	tok, err := svc.Tokens.Revoke(ctx, services.SystemActor(m.ID), *id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "token %d (%s) revoked at %s; servers stop accepting it within their --token-cache-ttl\n",
		tok.ID, tok.Name, cliTime(tok.RevokedAt))
	return nil
}

func storeList(ids []int64) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ",")
}

func cliTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
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
