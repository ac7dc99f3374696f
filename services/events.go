package services

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// recordEvent writes an event whose data services build (issue, expiry,
// void) on tx, the transaction of its change, with a delivery for every
// endpoint subscribed to it. Redemption and refund events are rendered by
// their statements in models (InsertRedemptionEvent, InsertRefundEvents).
func recordEvent(tx *gorm.DB, merchantID int64, typ string, couponID int64, now time.Time, data map[string]any) error {
	// Links such as codesExport keep their & unescaped.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil {
		return err
	}
	ev := &models.OutboxEvent{MerchantID: merchantID, UID: models.NewEventUID(), Type: typ, CouponID: couponID,
		Data: strings.TrimSuffix(b.String(), "\n"), CreatedAt: now}
	if err := models.InsertEvent(tx, ev); err != nil {
		return fmt.Errorf("record event %s: %w", typ, err)
	}
	return nil
}

// operatorName is the name of the actor's token, as redemption events name
// their operator, or nil for coupond itself.
func operatorName(tx *gorm.DB, a Actor) (*string, error) {
	if a.TokenID == 0 {
		return nil, nil
	}
	ts, err := models.TokenOperators(tx, a.MerchantID, []int64{a.TokenID})
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	return &ts[0].Name, nil
}

// codesExportLink is the path of the export of the codes one issue wrote:
// the campaign's coupons created at now (issues stamp every code of a batch
// with the same time).
func codesExportLink(campaignID int64, now time.Time) string {
	q := url.Values{}
	q.Set("campaignId", fmt.Sprint(campaignID))
	q.Set("from", now.UTC().Format(time.RFC3339Nano))
	q.Set("to", now.Add(time.Microsecond).UTC().Format(time.RFC3339Nano))
	return "/export/coupons.csv?" + q.Encode()
}
