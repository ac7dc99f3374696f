package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"coupond/models"
)

// DemoMerchantCode is the merchant the demo data belongs to.
const DemoMerchantCode = "demo"

// DemoResult is what SeedDemo made: fresh tokens to sign in with, and whether
// the data was created now or was already there.
type DemoResult struct {
	Created    bool
	AdminToken string
	ClerkToken string
	// FinanceToken signs in finance staff.
	FinanceToken string
}

// SeedDemo creates merchant "demo" with 3 stores, 2 campaigns, 1,000 coupons and
// a history of redemptions (two of them orders paid with several coupons) and refunds, all through the real services, when the
// merchant does not exist yet. Either way it mints fresh ADMIN, CLERK (bound to
// the first store) and FINANCE tokens, since stored tokens cannot be shown again.
func (s *Services) SeedDemo(ctx context.Context) (*DemoResult, error) {
	res := &DemoResult{}
	m, err := s.Merchants.ByCode(ctx, DemoMerchantCode)
	if errors.Is(err, ErrNotFound) {
		m, err = s.seedDemo(ctx)
		res.Created = true
	}
	if err != nil {
		return nil, fmt.Errorf("seed demo: %w", err)
	}
	mint := func(role models.Role, stores ...string) (string, error) {
		t, _, err := s.Tokens.Create(ctx, CreateTokenInput{MerchantID: m.ID, Role: role, StoreCodes: stores, Name: "demo " + string(role)})
		return t, err
	}
	if res.AdminToken, err = mint(models.RoleAdmin); err != nil {
		return nil, err
	}
	if res.ClerkToken, err = mint(models.RoleClerk, "SH001"); err != nil {
		return nil, err
	}
	if res.FinanceToken, err = mint(models.RoleFinance); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Services) seedDemo(ctx context.Context) (*models.Merchant, error) {
	m, err := s.Merchants.Create(ctx, DemoMerchantCode, "演示餐饮 Demo Kitchen", DefaultTimezone)
	if err != nil {
		return nil, err
	}
	admin := SystemActor(m.ID)
	var stores []*models.Store
	for _, st := range []CreateStoreInput{
		{Code: "SH001", Name: "上海人民广场店 Shanghai People's Square"},
		{Code: "SH002", Name: "上海徐家汇店 Shanghai Xujiahui"},
		{Code: "BJ001", Name: "北京三里屯店 Beijing Sanlitun"},
	} {
		created, err := s.Stores.Create(ctx, admin, st)
		if err != nil {
			return nil, err
		}
		stores = append(stores, created)
	}
	now := time.Now().UTC()
	window := int64(DefaultRefundWindowMinutes)
	cash, err := s.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "满30减10 ¥10 off ¥30", Type: models.CampaignCash,
		Value: 1000, MinSpend: 3000, ValidFrom: now.AddDate(0, 0, -7), ValidTo: now.AddDate(0, 3, 0),
		TotalQuantity: 5000, RefundWindowMinutes: &window})
	if err != nil {
		return nil, err
	}
	discount, err := s.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "上海店8折 20% off in Shanghai",
		Type: models.CampaignDiscount, Value: 20, MaxDiscount: 1500, ValidFrom: now.AddDate(0, 0, -7),
		ValidTo: now.AddDate(0, 1, 0), StoreIDs: []int64{stores[0].ID, stores[1].ID}, TotalQuantity: 2000,
		RefundWindowMinutes: &window, Stackable: true})
	if err != nil {
		return nil, err
	}
	cashCodes, err := s.Campaigns.IssueCoupons(ctx, admin, IssueInput{CampaignID: cash.ID, Count: 600})
	if err != nil {
		return nil, err
	}
	discountCodes, err := s.Campaigns.IssueCoupons(ctx, admin, IssueInput{CampaignID: discount.ID, Count: 400})
	if err != nil {
		return nil, err
	}
	// A little history: redemptions at every store, two refunds, rejections.
	for i := range 40 {
		code := cashCodes.Codes[i]
		store := stores[i%len(stores)]
		if i%2 == 1 && i < 30 {
			code, store = discountCodes.Codes[i], stores[i%2]
		}
		amount := int64(2500 + 500*(i%9))
		flow, err := s.Redemptions.Redeem(ctx, admin, RedeemInput{Code: code, StoreID: store.ID,
			RequestID: fmt.Sprintf("demo-redeem-%d", i), OrderAmount: amount})
		if err != nil {
			return nil, err
		}
		if flow.Status == models.FlowSucceeded && i%15 == 0 {
			if _, err := s.Redemptions.Refund(ctx, admin, RefundInput{RedeemNo: flow.RedeemNo,
				RequestID: fmt.Sprintf("demo-refund-%d", i), Reason: "顾客取消 customer cancelled", Reissue: i == 15}); err != nil {
				return nil, err
			}
		}
	}
	// Two orders paid with several coupons: one refunded in part, one in
	// full (the 20%-off campaign stacks; the cash one goes on once).
	first, err := s.Redemptions.RedeemCodes(ctx, admin, RedeemCodesInput{Codes: []string{discountCodes.Codes[100],
		discountCodes.Codes[101], cashCodes.Codes[100]}, StoreID: stores[0].ID, RequestID: "demo-order-1", OrderAmount: 8000})
	if err != nil {
		return nil, err
	}
	second, err := s.Redemptions.RedeemCodes(ctx, admin, RedeemCodesInput{Codes: []string{discountCodes.Codes[102],
		discountCodes.Codes[103]}, StoreID: stores[1].ID, RequestID: "demo-order-2", OrderAmount: 5000})
	if err != nil {
		return nil, err
	}
	if len(first.Flows) != 3 || len(second.Flows) != 2 {
		return nil, fmt.Errorf("demo orders: %s and %s", first.Order.Status, second.Order.Status)
	}
	if _, err := s.Redemptions.Refund(ctx, admin, RefundInput{RedeemNo: first.Flows[0].RedeemNo,
		RequestID: "demo-order-refund-1", Reason: "少上一道菜 one dish missing"}); err != nil {
		return nil, err
	}
	if _, err := s.Redemptions.RefundMany(ctx, admin, RefundManyInput{RedeemNos: []string{second.Flows[0].RedeemNo,
		second.Flows[1].RedeemNo}, RequestID: "demo-order-refund-2", Reason: "顾客取消 customer cancelled"}); err != nil {
		return nil, err
	}
	return m, nil
}
