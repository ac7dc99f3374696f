package services

import (
	"context"
	"fmt"
	"slices"

	"coupond/models"
)

// Actor is who calls a service: a merchant's API token with its role and, for a
// clerk, the stores it is bound to. Services authorize every call against it.
type Actor struct {
	MerchantID int64
	TokenID    int64
	Role       models.Role
	StoreIDs   []int64
}

// SystemActor is the actor of the CLI, the demo seeder and the jobs: an
// administrator of one merchant with no token.
func SystemActor(merchantID int64) Actor {
	return Actor{MerchantID: merchantID, Role: models.RoleAdmin}
}

// Label names the actor in transitions and audit events.
func (a Actor) Label() string {
	if a.TokenID == 0 {
		return "system"
	}
	return fmt.Sprintf("token:%d", a.TokenID)
}

func (a Actor) operatorID() *int64 {
	if a.TokenID == 0 {
		return nil
	}
	id := a.TokenID
	return &id
}

// require fails unless the actor has one of roles.
func (a Actor) require(roles ...models.Role) error {
	if a.MerchantID == 0 {
		return errUnauthenticated
	}
	if !slices.Contains(roles, a.Role) {
		return errForbidden
	}
	return nil
}

// requireStore fails unless the actor may run redemptions at storeID: an
// administrator or a mini-program (APP) anywhere in the merchant, a clerk at
// its own stores.
func (a Actor) requireStore(storeID int64) error {
	if err := a.require(models.RoleAdmin, models.RoleClerk, models.RoleApp); err != nil {
		return err
	}
	if a.Role == models.RoleClerk && !slices.Contains(a.StoreIDs, storeID) {
		return errStoreForbidden
	}
	return nil
}

// requireCustomer fails with BAD_USER_INPUT when customerRef is not a valid
// customer reference, or is missing from an APP token's request: a
// mini-program back end relays many customers through one token, and every
// request names the one it is for, which its rate limits count.
func (a Actor) requireCustomer(customerRef string) error {
	if customerRef == "" {
		if a.Role == models.RoleApp {
			return invalidf("customerRef is required for APP tokens")
		}
		return nil
	}
	return checkText("customerRef", customerRef, 64, false)
}

// MayExportCoupons returns nil when the actor may download every code of its
// merchant's campaigns (administrators and finance staff), UNAUTHENTICATED
// without a token and FORBIDDEN for any other role: a clerk's token sits at a
// till and must not carry off a campaign's unused codes.
func (a Actor) MayExportCoupons() error {
	return a.require(models.RoleAdmin, models.RoleFinance)
}

type actorKey struct{}

// WithActor returns a context carrying the authenticated actor.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor of ctx; an unauthenticated context gives the zero
// Actor, which every service refuses with UNAUTHENTICATED.
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}

type requestIDKey struct{}

// WithRequestID returns a context carrying the HTTP request id, which logs and
// audit events record.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id of ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
