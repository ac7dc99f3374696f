package models

import (
	"strings"
	"time"

	"gorm.io/gorm"
)

// WebhookEndpoint is a merchant's receiver of events: a URL, the event types
// it subscribes to (comma-separated in Events) and its signing secrets.
// PreviousSecret also signs until PreviousUntil after a rotation.
// FailingSince is when the first of an unbroken run of failed attempts
// happened; a success clears it.
type WebhookEndpoint struct {
	MerchantID     int64
	ID             int64
	URL            string `gorm:"column:url"`
	Description    string
	Events         string
	Enabled        bool
	DisabledReason *string
	Secret         string
	PreviousSecret *string
	PreviousUntil  *time.Time
	FailingSince   *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// TableName is webhook_endpoints.
func (WebhookEndpoint) TableName() string { return "webhook_endpoints" }

// EventList is the endpoint's subscribed types.
func (e *WebhookEndpoint) EventList() []string {
	if e.Events == "" {
		return nil
	}
	return strings.Split(e.Events, ",")
}

// JoinEventTypes is the stored form of a list of event types.
func JoinEventTypes(types []string) string { return joinTypes(types) }

// CountWebhookEndpointsLocked counts the merchant's endpoints after locking
// the merchant's row on PostgreSQL (SQLite's writers take turns anyway), so
// that the count holds until tx ends: endpoint writes of one merchant are
// rare and take turns.
func CountWebhookEndpointsLocked(tx *gorm.DB, merchantID int64) (int64, error) {
	if DialectOfDB(tx) == Postgres {
		if err := tx.Exec("SELECT id FROM merchants WHERE id = ? FOR UPDATE", merchantID).Error; err != nil {
			return 0, err
		}
	}
	var n int64
	err := tx.Model(&WebhookEndpoint{}).Where("merchant_id = ?", merchantID).Count(&n).Error
	return n, err
}

// InsertWebhookEndpoint inserts e with the merchant's next endpoint id and
// sets e.ID. Call it after CountWebhookEndpointsLocked on the same tx.
func InsertWebhookEndpoint(tx *gorm.DB, e *WebhookEndpoint) error {
	var next int64
	if err := tx.Raw("SELECT COALESCE(MAX(id), 0) + 1 FROM webhook_endpoints WHERE merchant_id = ?", e.MerchantID).
		Scan(&next).Error; err != nil {
		return err
	}
	e.ID = next
	return translate(tx, tx.Create(e).Error)
}

// WebhookEndpoints returns the merchant's endpoints, oldest first.
func WebhookEndpoints(db *gorm.DB, merchantID int64) ([]WebhookEndpoint, error) {
	var out []WebhookEndpoint
	err := db.Where("merchant_id = ?", merchantID).Order("id").Find(&out).Error
	return out, err
}

// WebhookEndpointByID returns the merchant's endpoint id, or
// gorm.ErrRecordNotFound.
func WebhookEndpointByID(db *gorm.DB, merchantID, id int64) (*WebhookEndpoint, error) {
	var e WebhookEndpoint
	if err := db.Where("merchant_id = ? AND id = ?", merchantID, id).Take(&e).Error; err != nil {
		return nil, err
	}
	return &e, nil
}

// WebhookEndpointsByID returns the endpoints with the given keys of any
// merchants, for the delivery worker.
func WebhookEndpointsByID(db *gorm.DB, keys [][2]int64) ([]WebhookEndpoint, error) {
	var out []WebhookEndpoint
	if len(keys) == 0 {
		return out, nil
	}
	q := db.Where("1 = 0")
	for _, k := range keys {
		q = q.Or("merchant_id = ? AND id = ?", k[0], k[1])
	}
	err := q.Find(&out).Error
	return out, err
}

// UpdateWebhookEndpoint sets the given columns of the merchant's endpoint id
// and reports whether it exists.
func UpdateWebhookEndpoint(tx *gorm.DB, merchantID, id int64, set map[string]any) (bool, error) {
	res := tx.Model(&WebhookEndpoint{}).Where("merchant_id = ? AND id = ?", merchantID, id).Updates(set)
	return res.RowsAffected == 1, res.Error
}

// RotateWebhookSecret makes secret the endpoint's secret and keeps the
// current one signing until until; false when there is no such endpoint.
func RotateWebhookSecret(tx *gorm.DB, merchantID, id int64, secret string, until, now time.Time) (bool, error) {
	res := tx.Exec(`UPDATE webhook_endpoints SET previous_secret = secret, previous_until = ?, secret = ?, updated_at = ?
WHERE merchant_id = ? AND id = ?`, until, secret, now, merchantID, id)
	return res.RowsAffected == 1, res.Error
}

// DeleteWebhookEndpoint deletes the endpoint and its deliveries; false when
// there is no such endpoint.
func DeleteWebhookEndpoint(tx *gorm.DB, merchantID, id int64) (bool, error) {
	if err := tx.Exec("DELETE FROM webhook_deliveries WHERE merchant_id = ? AND endpoint_id = ?", merchantID, id).Error; err != nil {
		return false, err
	}
	res := tx.Exec("DELETE FROM webhook_endpoints WHERE merchant_id = ? AND id = ?", merchantID, id)
	return res.RowsAffected == 1, res.Error
}

// DisableWebhookEndpoint disables an enabled endpoint with the reason;
// false when it was not enabled (someone else disabled it first).
func DisableWebhookEndpoint(tx *gorm.DB, merchantID, id int64, reason string, now time.Time) (bool, error) {
	res := tx.Exec(`UPDATE webhook_endpoints SET enabled = ?, disabled_reason = ?, updated_at = ?
WHERE merchant_id = ? AND id = ? AND enabled = ?`, false, reason, now, merchantID, id, true)
	return res.RowsAffected == 1, res.Error
}

// NoteWebhookAttempt records the outcome of an attempt on the endpoint's
// failure run: a failure starts it if none is running, a success ends it.
// It returns when the run started (nil after a success).
func NoteWebhookAttempt(tx *gorm.DB, merchantID, id int64, ok bool, now time.Time) (*time.Time, error) {
	if ok {
		return nil, tx.Exec(`UPDATE webhook_endpoints SET failing_since = NULL WHERE merchant_id = ? AND id = ? AND failing_since IS NOT NULL`,
			merchantID, id).Error
	}
	if err := tx.Exec(`UPDATE webhook_endpoints SET failing_since = ? WHERE merchant_id = ? AND id = ? AND failing_since IS NULL`,
		now, merchantID, id).Error; err != nil {
		return nil, err
	}
	var e WebhookEndpoint
	if err := tx.Select("failing_since").Where("merchant_id = ? AND id = ?", merchantID, id).Take(&e).Error; err != nil {
		return nil, err
	}
	return e.FailingSince, nil
}
