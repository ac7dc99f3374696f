package services

// SetIssuance makes c issue coupons in chunks of chunk coupons, drawing their
// codes from fill; zero values restore the defaults.
func SetIssuance(c *Campaigns, chunk int64, fill func([]string)) { c.chunk, c.fillCodes = chunk, fill }

// FillCouponCodes is fillCouponCodes, for tests that draw real codes.
var FillCouponCodes = fillCouponCodes
