package models

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
)

const flowColumns = `merchant_id, redeem_no, operation, request_id, fingerprint, coupon_id, store_id, operator_id,
  status, reject_reason, release_reason, order_amount, discount_amount, order_ref, hold_until, attempts, version,
  created_at, updated_at, finished_at`

const transitionColumns = `merchant_id, coupon_id, from_status, to_status, version_after, flow_no, actor, store_id, created_at`

func flowValues(f *RedemptionFlow) []any {
	return []any{f.MerchantID, f.RedeemNo, string(f.Operation), f.RequestID, f.Fingerprint, f.CouponID, f.StoreID,
		f.OperatorID, string(f.Status), f.RejectReason, f.ReleaseReason, f.OrderAmount, f.DiscountAmount, f.OrderRef,
		f.HoldUntil, f.Attempts, f.Version, f.CreatedAt, f.UpdatedAt, f.FinishedAt}
}

func transitionValues(t CouponTransition) []any {
	return []any{t.MerchantID, t.CouponID, string(t.FromStatus), string(t.ToStatus), t.VersionAfter, t.FlowNo, t.Actor,
		t.StoreID, t.CreatedAt}
}

func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// InsertFlow inserts a redemption flow together with the coupon transitions
// its transaction took, and sets flow.ID. On PostgreSQL the rows go in with
// one statement (one round trip inside the redemption transaction); on SQLite,
// which has no data-modifying WITH, with one statement each. A unique
// violation (the request id or the coupon's live redemption) is
// gorm.ErrDuplicatedKey.
func InsertFlow(tx *gorm.DB, flow *RedemptionFlow, transitions ...CouponTransition) error {
	insertFlow := "INSERT INTO redemption_flows (" + flowColumns + ") VALUES " + placeholders(20) + " RETURNING id"
	args := flowValues(flow)
	var rows []struct{ ID int64 }
	if DialectOfDB(tx) == Postgres && len(transitions) > 0 {
		vals := make([]string, len(transitions))
		for i, t := range transitions {
			vals[i] = placeholders(9)
			args = append(args, transitionValues(t)...)
		}
		q := "WITH f AS (" + insertFlow + "), t AS (INSERT INTO coupon_transitions (" + transitionColumns + ") VALUES " +
			strings.Join(vals, ", ") + ") SELECT id FROM f"
		if err := tx.Raw(q, args...).Scan(&rows).Error; err != nil {
			return translate(tx, err)
		}
		transitions = nil
	} else if err := tx.Raw(insertFlow, args...).Scan(&rows).Error; err != nil {
		return translate(tx, err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("insert flow %s: %d rows returned", flow.RedeemNo, len(rows))
	}
	flow.ID = rows[0].ID
	for _, t := range transitions {
		if err := tx.Exec("INSERT INTO coupon_transitions ("+transitionColumns+") VALUES "+placeholders(9),
			transitionValues(t)...).Error; err != nil {
			return err
		}
	}
	return nil
}

// translate maps a driver error to GORM's (gorm.ErrDuplicatedKey, ...), which
// TranslateError does for Exec and Create but not for Raw(...).Scan.
func translate(tx *gorm.DB, err error) error {
	if t, ok := tx.Dialector.(gorm.ErrorTranslator); ok {
		return t.Translate(err)
	}
	return err
}

// InsertRejectedFlows inserts REJECTED flows, which record no transition, with
// one statement, and sets the ID of each it inserted. A flow whose request id
// the merchant already used for the operation is skipped, not an error: its
// ID stays 0 and the caller answers it with the stored flow.
func InsertRejectedFlows(tx *gorm.DB, flows []*RedemptionFlow) error {
	if len(flows) == 0 {
		return nil
	}
	vals := make([]string, len(flows))
	args := make([]any, 0, 20*len(flows))
	byNo := make(map[string]*RedemptionFlow, len(flows))
	for i, f := range flows {
		if f.Status != FlowRejected {
			return fmt.Errorf("insert rejected flow %s: status %s", f.RedeemNo, f.Status)
		}
		vals[i] = placeholders(20)
		args = append(args, flowValues(f)...)
		byNo[f.RedeemNo] = f
	}
	var rows []struct {
		ID       int64
		RedeemNo string
	}
	err := tx.Raw("INSERT INTO redemption_flows ("+flowColumns+") VALUES "+strings.Join(vals, ", ")+
		" ON CONFLICT (merchant_id, operation, request_id) DO NOTHING RETURNING id, redeem_no", args...).Scan(&rows).Error
	if err != nil {
		return translate(tx, err)
	}
	for _, r := range rows {
		if f := byNo[r.RedeemNo]; f != nil {
			f.ID = r.ID
		}
	}
	return nil
}
