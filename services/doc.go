// Package services holds coupond's business rules: the coupon state machine,
// the redemption ledger and its idempotency, refunds, campaigns and issuance,
// authorization and tenancy. Services own transactions; every state change is a
// conditional update judged by rows affected.
package services
