package harness

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Merchant is a merchant created for a run, with its tokens.
type Merchant struct {
	Code       string
	AdminToken string
}

// CreateMerchant migrates dbURL and creates a merchant and an ADMIN token
// through the CLI.
func (e Env) CreateMerchant(ctx context.Context, dbURL, code string) (Merchant, error) {
	if _, err := e.CLI(ctx, "migrate", "--database-url", dbURL); err != nil {
		return Merchant{}, err
	}
	if _, err := e.CLI(ctx, "merchant", "create", "--database-url", dbURL, "--code", code, "--name", "Bench "+code); err != nil {
		return Merchant{}, err
	}
	tok, err := e.CLI(ctx, "token", "create", "--database-url", dbURL, "--merchant", code, "--role", "ADMIN", "--name", "bench-admin")
	if err != nil {
		return Merchant{}, err
	}
	return Merchant{Code: code, AdminToken: strings.TrimSpace(tok)}, nil
}

// ClerkToken creates a CLERK token bound to store through the CLI.
func (e Env) ClerkToken(ctx context.Context, dbURL, merchant, store string) (string, error) {
	tok, err := e.CLI(ctx, "token", "create", "--database-url", dbURL, "--merchant", merchant, "--role", "CLERK",
		"--store", store, "--name", "bench-clerk-"+store)
	return strings.TrimSpace(tok), err
}

// CreateStore creates a store through the API and returns its id.
func CreateStore(ctx context.Context, c *Client, code string) (string, error) {
	var out struct {
		CreateStore struct{ ID string } `json:"createStore"`
	}
	err := c.Do(ctx, `mutation($in: CreateStoreInput!) { createStore(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"code": code, "name": "Bench " + code}}, &out)
	return out.CreateStore.ID, err
}

// CreateCampaign creates a CASH campaign valid for a year from yesterday and
// returns its id.
func CreateCampaign(ctx context.Context, c *Client, name string, total int) (string, error) {
	return CreateCampaignWith(ctx, c, name, total, nil)
}

// CreateCampaignWith is CreateCampaign with more fields of
// CreateCampaignInput (e.g. "stackable": true).
func CreateCampaignWith(ctx context.Context, c *Client, name string, total int, extra map[string]any) (string, error) {
	var out struct {
		CreateCampaign struct{ ID string } `json:"createCampaign"`
	}
	now := time.Now().UTC()
	in := map[string]any{"name": name, "type": "CASH", "value": 1000, "minSpend": 0,
		"validFrom": now.Add(-24 * time.Hour).Format(time.RFC3339), "validTo": now.Add(365 * 24 * time.Hour).Format(time.RFC3339),
		"totalQuantity": total, "refundWindowMinutes": 1440}
	for k, v := range extra {
		in[k] = v
	}
	err := c.Do(ctx, `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id } }`, map[string]any{"in": in}, &out)
	return out.CreateCampaign.ID, err
}

// Issue issues n coupons of campaign through the API and returns how long the
// call took.
func Issue(ctx context.Context, c *Client, campaign string, n int) (time.Duration, error) {
	var out struct {
		IssueCoupons struct{ Issued int } `json:"issueCoupons"`
	}
	start := time.Now()
	err := c.Do(ctx, `mutation($in: IssueCouponsInput!) { issueCoupons(input: $in) { issued } }`,
		map[string]any{"in": map[string]any{"campaignId": campaign, "count": n}}, &out)
	took := time.Since(start)
	if err == nil && out.IssueCoupons.Issued != n {
		err = fmt.Errorf("issued %d coupons, want %d", out.IssueCoupons.Issued, n)
	}
	return took, err
}

// Codes reads the codes of campaign's UNUSED coupons by SQL, in id order.
func Codes(ctx context.Context, pool *pgxpool.Pool, campaign string) ([]string, error) {
	id, err := strconv.ParseInt(campaign, 10, 64)
	if err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, "SELECT code FROM coupons WHERE campaign_id = $1 AND status = 'UNUSED' ORDER BY id", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Fixture is a database with a merchant, one store, a clerk token for it and
// a running server.
type Fixture struct {
	Env      Env
	DBName   string
	DBURL    string
	Pool     *pgxpool.Pool
	Merchant Merchant
	StoreID  string
	Store    string
	Clerk    string
	Server   *Server
	Admin    *Client
}

// NewFixture recreates database dbName, creates merchant "bench", starts a
// server with cfg (DatabaseURL defaults to the database), creates store S1
// and a clerk token for it.
func (e Env) NewFixture(ctx context.Context, dbName string, cfg ServerConfig) (*Fixture, error) {
	if err := e.RecreateDB(ctx, dbName); err != nil {
		return nil, err
	}
	f := &Fixture{Env: e, DBName: dbName, DBURL: e.DBURL(dbName, 0), Store: "S1"}
	m, err := e.CreateMerchant(ctx, f.DBURL, "bench")
	if err != nil {
		return nil, err
	}
	f.Merchant = m
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = f.DBURL
	}
	if f.Server, err = e.StartServer(ctx, cfg); err != nil {
		return nil, err
	}
	f.Admin = &Client{URL: f.Server.URL(), Token: m.AdminToken}
	if f.StoreID, err = CreateStore(ctx, f.Admin, f.Store); err != nil {
		f.Close()
		return nil, err
	}
	if f.Clerk, err = e.ClerkToken(ctx, f.DBURL, m.Code, f.Store); err != nil {
		f.Close()
		return nil, err
	}
	if f.Pool, err = pgxpool.New(ctx, f.DBURL+"&application_name=coupond-bench"); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Campaign creates a campaign with n coupons issued and returns its id, the
// issuance time and the codes.
func (f *Fixture) Campaign(ctx context.Context, name string, n int) (string, time.Duration, []string, error) {
	return f.CampaignWith(ctx, name, n, nil)
}

// CampaignWith is Campaign with more fields of CreateCampaignInput.
func (f *Fixture) CampaignWith(ctx context.Context, name string, n int, extra map[string]any) (string, time.Duration, []string, error) {
	id, err := CreateCampaignWith(ctx, f.Admin, name, n, extra)
	if err != nil {
		return "", 0, nil, err
	}
	took, err := Issue(ctx, f.Admin, id, n)
	if err != nil {
		return id, took, nil, err
	}
	codes, err := Codes(ctx, f.Pool, id)
	return id, took, codes, err
}

// Close stops the server and closes the pool.
func (f *Fixture) Close() {
	if f.Server != nil {
		f.Server.Stop()
	}
	if f.Pool != nil {
		f.Pool.Close()
	}
}
