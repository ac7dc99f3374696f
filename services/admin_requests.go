package services

import (
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// adminRequest is one idempotent admin call (createStore, createCampaign,
// issueCoupons), with the redemption's contract: the first result is stored
// under the request id in the transaction of the change, and a repeat gets
// it back without running; the same id with other parameters is
// IDEMPOTENCY_KEY_REUSED; concurrent repeats run once, because the second
// insert of the id fails on the unique index and its transaction rolls back.
// The request id is optional for admin calls: a nil *adminRequest records
// nothing and replays nothing.
type adminRequest struct {
	merchantID int64
	op         string
	requestID  string
	fp         string
}

// newAdminRequest returns the call's request, or nil when requestID is
// empty; params are the call's parameters, fingerprinted.
func newAdminRequest(actor Actor, op, requestID string, params ...string) (*adminRequest, error) {
	if requestID == "" {
		return nil, nil
	}
	if err := validateRequestID(requestID); err != nil {
		return nil, err
	}
	return &adminRequest{merchantID: actor.MerchantID, op: op, requestID: requestID,
		fp: fingerprint(append([]string{op}, params...)...)}, nil
}

// replayed decodes the stored result of an earlier call with the same
// request id into out and reports true, or reports false when there is none.
func (r *adminRequest) replayed(db *gorm.DB, out any) (bool, error) {
	if r == nil {
		return false, nil
	}
	prior, err := models.AdminRequestOf(db, r.merchantID, r.op, r.requestID)
	if err != nil {
		return false, fmt.Errorf("find request %s: %w", r.requestID, err)
	}
	if prior == nil {
		return false, nil
	}
	if prior.Fingerprint != r.fp {
		return false, ErrIdempotencyKeyReused
	}
	if err := json.Unmarshal([]byte(prior.Result), out); err != nil {
		return false, fmt.Errorf("decode result of request %s: %w", r.requestID, err)
	}
	return true, nil
}

// record stores the call's result on tx, the transaction of its change.
func (r *adminRequest) record(tx *gorm.DB, result any, now time.Time) error {
	if r == nil {
		return nil
	}
	b, err := json.Marshal(result)
	if err != nil {
		return err
	}
	return models.InsertAdminRequest(tx, &models.AdminRequest{MerchantID: r.merchantID, Operation: r.op,
		RequestID: r.requestID, Fingerprint: r.fp, Result: string(b), CreatedAt: now})
}
