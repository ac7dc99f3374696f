-- +goose Up
-- VOIDED: an admin killed an unused code (leaked, fraud). The new check is
-- added NOT VALID and validated apart, so the table is not locked against
-- redemptions while every row is checked.
ALTER TABLE coupons DROP CONSTRAINT coupons_status_check;
ALTER TABLE coupons ADD CONSTRAINT coupons_status_check
  CHECK (status IN ('UNUSED', 'REDEEMING', 'REDEEMED', 'REFUNDED', 'EXPIRED', 'VOIDED')) NOT VALID;
ALTER TABLE coupons VALIDATE CONSTRAINT coupons_status_check;

-- +goose Down
ALTER TABLE coupons DROP CONSTRAINT coupons_status_check;
ALTER TABLE coupons ADD CONSTRAINT coupons_status_check
  CHECK (status IN ('UNUSED', 'REDEEMING', 'REDEEMED', 'REFUNDED', 'EXPIRED'));
