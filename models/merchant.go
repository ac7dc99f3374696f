package models

import "time"

// Merchant is a tenant: a chain of stores.
type Merchant struct {
	ID        int64
	Code      string
	Name      string
	Timezone  string
	CreatedAt time.Time
}
