package graph

import (
	"context"
	"net/http"
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
// request, whatever the size of the list that asks for it.
type loaders struct {
	store          *dataloadgen.Loader[int64, *models.Store]
	coupon         *dataloadgen.Loader[int64, *models.Coupon]
	campaign       *dataloadgen.Loader[int64, *models.Campaign]
	campaignStores *dataloadgen.Loader[int64, []int64]
	transitions    *dataloadgen.Loader[int64, []*models.CouponTransition]
	redemptions    *dataloadgen.Loader[int64, []*models.RedemptionFlow]
	refunds        *dataloadgen.Loader[int64, []*models.RefundFlow]
	refundOf       *dataloadgen.Loader[int64, *models.RefundFlow]
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

func newLoaders(s *services.Services) *loaders {
	w := dataloadgen.WithWait(loaderWait)
	return &loaders{
		store: dataloadgen.NewMappedLoader(func(ctx context.Context, ids []int64) (map[int64]*models.Store, error) {
			rows, err := s.Stores.ByIDs(ctx, services.ActorFrom(ctx), ids)
			return byID(rows, func(r *models.Store) int64 { return r.ID }), err
		}, w),
		coupon: dataloadgen.NewMappedLoader(func(ctx context.Context, ids []int64) (map[int64]*models.Coupon, error) {
			rows, err := s.Coupons.ByIDs(ctx, services.ActorFrom(ctx), ids)
			return byID(rows, func(r *models.Coupon) int64 { return r.ID }), err
		}, w),
		campaign: dataloadgen.NewMappedLoader(func(ctx context.Context, ids []int64) (map[int64]*models.Campaign, error) {
			rows, err := s.Campaigns.ByIDs(ctx, services.ActorFrom(ctx), ids)
			return byID(rows, func(r *models.Campaign) int64 { return r.ID }), err
		}, w),
		campaignStores: listLoader(func(ctx context.Context, ids []int64) (map[int64][]int64, error) {
			return s.Campaigns.StoreIDs(ctx, services.ActorFrom(ctx), ids)
		}),
		transitions: listLoader(func(ctx context.Context, ids []int64) (map[int64][]*models.CouponTransition, error) {
			rows, err := s.Coupons.Transitions(ctx, services.ActorFrom(ctx), ids)
			return groupBy(rows, func(r *models.CouponTransition) int64 { return r.CouponID }), err
		}),
		redemptions: listLoader(func(ctx context.Context, ids []int64) (map[int64][]*models.RedemptionFlow, error) {
			rows, err := s.Coupons.RedemptionsOfCoupons(ctx, services.ActorFrom(ctx), ids)
			return groupBy(rows, func(r *models.RedemptionFlow) int64 { return r.CouponID }), err
		}),
		refunds: listLoader(func(ctx context.Context, ids []int64) (map[int64][]*models.RefundFlow, error) {
			rows, err := s.Coupons.RefundsOfCoupons(ctx, services.ActorFrom(ctx), ids)
			return groupBy(rows, func(r *models.RefundFlow) int64 { return r.CouponID }), err
		}),
		refundOf: dataloadgen.NewLoader(func(ctx context.Context, ids []int64) ([]*models.RefundFlow, []error) {
			rows, err := s.Redemptions.RefundsOf(ctx, services.ActorFrom(ctx), ids)
			m := byID(rows, func(r *models.RefundFlow) int64 { return r.RedemptionID })
			out := make([]*models.RefundFlow, len(ids))
			errs := make([]error, len(ids))
			for i, id := range ids {
				out[i], errs[i] = m[id], err
			}
			return out, errs
		}, w),
	}
}

func withLoaders(s *services.Services, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loadersKey{}, newLoaders(s))))
	})
}

func loadersFrom(ctx context.Context) *loaders {
	return ctx.Value(loadersKey{}).(*loaders)
}
