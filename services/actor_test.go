package services_test

import (
	"testing"

	"coupond/models"
	"coupond/services"
)

func TestMayExportCoupons(t *testing.T) {
	tests := []struct {
		name  string
		give  services.Actor
		wantC string
	}{
		{"admin", services.Actor{MerchantID: 1, TokenID: 1, Role: models.RoleAdmin}, ""},
		{"finance", services.Actor{MerchantID: 1, TokenID: 2, Role: models.RoleFinance}, ""},
		{"clerk", services.Actor{MerchantID: 1, TokenID: 3, Role: models.RoleClerk, StoreIDs: []int64{1}}, "FORBIDDEN"},
		{"nobody", services.Actor{}, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.MayExportCoupons()
			if tt.wantC == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantCode(t, err, tt.wantC)
		})
	}
}
