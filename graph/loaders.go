package graph

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/vikstrous/dataloadgen"

	"coupond/models"
	"coupond/services"
)

// loaderWait is how long a loader collects keys before fetching. Short, because
// mutations on the redemption hot path resolve their coupon and store through
// loaders too.
const loaderWait = 200 * time.Microsecond

// loaders batch the lookups of one request: each relation is one query per
// request, whatever the size of the list that asks for it. Each loader is made
// on first use: most requests (a redemption, say) need none of them.
type loaders struct {
	s              *services.Services
	store          lazy[*dataloadgen.Loader[int64, *models.Store]]
	coupon         lazy[*dataloadgen.Loader[int64, *models.Coupon]]
	campaign       lazy[*dataloadgen.Loader[int64, *models.Campaign]]
	campaignStores lazy[*dataloadgen.Loader[int64, []int64]]
	transitions    lazy[*dataloadgen.Loader[int64, []*models.CouponTransition]]
	redemptions    lazy[*dataloadgen.Loader[int64, []*models.RedemptionFlow]]
	refunds        lazy[*dataloadgen.Loader[int64, []*models.RefundFlow]]
	refundOf       lazy[*dataloadgen.Loader[int64, *models.RefundFlow]]
	operator       lazy[*dataloadgen.Loader[int64, *models.APIToken]]
	tokenStores    lazy[*dataloadgen.Loader[int64, []int64]]
	findingEvents  lazy[*dataloadgen.Loader[int64, []*models.FindingEvent]]
}

// lazy holds a value made once, on first get.
type lazy[T any] struct {
	once sync.Once
	v    T
}

func (l *lazy[T]) get(make func() T) T {
	l.once.Do(func() { l.v = make() })
	return l.v
}

type loadersKey struct{}

func byID[T any](rows []T, id func(*T) int64) map[int64]*T {
	out := make(map[int64]*T, len(rows))
	for i := range rows {
		out[id(&rows[i])] = &rows[i]
	}
	return out
}

func groupBy[T any](rows []T, key func(*T) int64) map[int64][]*T {
	out := make(map[int64][]*T)
	for i := range rows {
		k := key(&rows[i])
		out[k] = append(out[k], &rows[i])
	}
	return out
}

// listLoader makes a loader whose keys without rows load as empty lists.
func listLoader[T any](fetch func(ctx context.Context, ids []int64) (map[int64][]T, error)) *dataloadgen.Loader[int64, []T] {
	return dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([][]T, []error) {
		m, err := fetch(ctx, ids)
		out := make([][]T, len(ids))
		errs := make([]error, len(ids))
		for i, id := range ids {
			out[i], errs[i] = m[id], err
			if out[i] == nil {
				out[i] = []T{}
			}
		}
		return out, errs
	}, dataloadgen.WithWait(loaderWait))
}

func newLoaders(s *services.Services) *loaders { return &loaders{s: s} }

func (l *loaders) storeLoader() *dataloadgen.Loader[int64, *models.Store] {
	s := l.s
	return l.store.get(func() *dataloadgen.Loader[int64, *models.Store] {
		return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []int64) (map[int64]*models.Store, error) {
			rows, err := s.Stores.ByIDs(ctx, services.ActorFrom(ctx), ids)
			return byID(rows, func(r *models.Store) int64 { return r.ID }), err
		}, dataloadgen.WithWait(loaderWait))
	})
}

func (l *loaders) couponLoader() *dataloadgen.Loader[int64, *models.Coupon] {
	s := l.s
	return l.coupon.get(func() *dataloadgen.Loader[int64, *models.Coupon] {
		return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []int64) (map[int64]*models.Coupon, error) {
			rows, err := s.Coupons.ByIDs(ctx, services.ActorFrom(ctx), ids)
			return byID(rows, func(r *models.Coupon) int64 { return r.ID }), err
		}, dataloadgen.WithWait(loaderWait))
	})
}

func (l *loaders) campaignLoader() *dataloadgen.Loader[int64, *models.Campaign] {
	s := l.s
	return l.campaign.get(func() *dataloadgen.Loader[int64, *models.Campaign] {
		return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []int64) (map[int64]*models.Campaign, error) {
			rows, err := s.Campaigns.ByIDs(ctx, services.ActorFrom(ctx), ids)
			return byID(rows, func(r *models.Campaign) int64 { return r.ID }), err
		}, dataloadgen.WithWait(loaderWait))
	})
}

func (l *loaders) campaignStoresLoader() *dataloadgen.Loader[int64, []int64] {
	s := l.s
	return l.campaignStores.get(func() *dataloadgen.Loader[int64, []int64] {
		return listLoader(func(ctx context.Context, ids []int64) (map[int64][]int64, error) {
			return s.Campaigns.StoreIDs(ctx, services.ActorFrom(ctx), ids)
		})
	})
}

func (l *loaders) transitionsLoader() *dataloadgen.Loader[int64, []*models.CouponTransition] {
	s := l.s
	return l.transitions.get(func() *dataloadgen.Loader[int64, []*models.CouponTransition] {
		return listLoader(func(ctx context.Context, ids []int64) (map[int64][]*models.CouponTransition, error) {
			rows, err := s.Coupons.Transitions(ctx, services.ActorFrom(ctx), ids)
			return groupBy(rows, func(r *models.CouponTransition) int64 { return r.CouponID }), err
		})
	})
}

func (l *loaders) redemptionsLoader() *dataloadgen.Loader[int64, []*models.RedemptionFlow] {
	s := l.s
	return l.redemptions.get(func() *dataloadgen.Loader[int64, []*models.RedemptionFlow] {
		return listLoader(func(ctx context.Context, ids []int64) (map[int64][]*models.RedemptionFlow, error) {
			rows, err := s.Coupons.RedemptionsOfCoupons(ctx, services.ActorFrom(ctx), ids)
			return groupBy(rows, func(r *models.RedemptionFlow) int64 { return r.CouponID }), err
		})
	})
}

func (l *loaders) refundsLoader() *dataloadgen.Loader[int64, []*models.RefundFlow] {
	s := l.s
	return l.refunds.get(func() *dataloadgen.Loader[int64, []*models.RefundFlow] {
		return listLoader(func(ctx context.Context, ids []int64) (map[int64][]*models.RefundFlow, error) {
			rows, err := s.Coupons.RefundsOfCoupons(ctx, services.ActorFrom(ctx), ids)
			return groupBy(rows, func(r *models.RefundFlow) int64 { return r.CouponID }), err
		})
	})
}

func (l *loaders) refundOfLoader() *dataloadgen.Loader[int64, *models.RefundFlow] {
	s := l.s
	return l.refundOf.get(func() *dataloadgen.Loader[int64, *models.RefundFlow] {
		return dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]*models.RefundFlow, []error) {
			rows, err := s.Redemptions.RefundsOf(ctx, services.ActorFrom(ctx), ids)
			m := byID(rows, func(r *models.RefundFlow) int64 { return r.RedemptionID })
			out := make([]*models.RefundFlow, len(ids))
			errs := make([]error, len(ids))
			for i, id := range ids {
				out[i], errs[i] = m[id], err
			}
			return out, errs
		}, dataloadgen.WithWait(loaderWait))
	})
}

func (l *loaders) operatorLoader() *dataloadgen.Loader[int64, *models.APIToken] {
	s := l.s
	return l.operator.get(func() *dataloadgen.Loader[int64, *models.APIToken] {
		return dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]*models.APIToken, []error) {
			rows, err := s.Tokens.Operators(ctx, services.ActorFrom(ctx), ids)
			m := byID(rows, func(r *models.APIToken) int64 { return r.ID })
			out := make([]*models.APIToken, len(ids))
			errs := make([]error, len(ids))
			for i, id := range ids {
				out[i], errs[i] = m[id], err
			}
			return out, errs
		}, dataloadgen.WithWait(loaderWait))
	})
}

func (l *loaders) tokenStoresLoader() *dataloadgen.Loader[int64, []int64] {
	s := l.s
	return l.tokenStores.get(func() *dataloadgen.Loader[int64, []int64] {
		return listLoader(func(ctx context.Context, ids []int64) (map[int64][]int64, error) {
			return s.Tokens.StoreIDs(ctx, services.ActorFrom(ctx), ids)
		})
	})
}

func (l *loaders) findingHistoryLoader() *dataloadgen.Loader[int64, []*models.FindingEvent] {
	s := l.s
	return l.findingEvents.get(func() *dataloadgen.Loader[int64, []*models.FindingEvent] {
		return listLoader(func(ctx context.Context, ids []int64) (map[int64][]*models.FindingEvent, error) {
			rows, err := s.Reconciliation.FindingHistory(ctx, services.ActorFrom(ctx), ids)
			return groupBy(rows, func(r *models.FindingEvent) int64 { return r.FindingID }), err
		})
	})
}

func withLoaders(s *services.Services, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loadersKey{}, newLoaders(s))))
	})
}

func loadersFrom(ctx context.Context) *loaders {
	return ctx.Value(loadersKey{}).(*loaders)
}
