package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/models"
)

// UpdateCampaignInput changes what may change of a campaign; nil fields
// stay. Version is the version the caller read.
type UpdateCampaignInput struct {
	ID                  int64
	Version             int64
	Name                *string
	ValidTo             *time.Time
	TotalQuantity       *int64
	RefundWindowMinutes *int64
}

// Update changes a campaign's name, end, total quantity or refund window;
// administrators only. It is one update WHERE id = ? AND version = ?: a stale
// version is CONFLICT with the current version in the error, and nothing is
// written. A total below what was issued, or an end before the start, is
// BAD_USER_INPUT.
func (c *Campaigns) Update(ctx context.Context, actor Actor, in UpdateCampaignInput) (*models.Campaign, error) {
	change := models.CampaignChange{Name: in.Name, ValidTo: in.ValidTo, TotalQuantity: in.TotalQuantity,
		RefundWindowMinutes: in.RefundWindowMinutes}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" {
			return nil, invalidf("name must not be empty")
		}
		if err := checkText("name", name, 100, false); err != nil {
			return nil, err
		}
		change.Name = &name
	}
	if in.TotalQuantity != nil && (*in.TotalQuantity < 1 || *in.TotalQuantity > 100_000_000) {
		return nil, invalidf("totalQuantity must be between 1 and 100000000")
	}
	if in.RefundWindowMinutes != nil && (*in.RefundWindowMinutes < 0 || *in.RefundWindowMinutes > 525_600) {
		return nil, invalidf("refundWindowMinutes must be between 0 and 525600")
	}
	if in.ValidTo != nil {
		t := in.ValidTo.UTC()
		change.ValidTo = &t
	}
	return c.change(ctx, actor, in.ID, in.Version, "campaign.update", change, nil)
}

// Pause stops a campaign: it issues nothing and its coupons are rejected
// with CAMPAIGN_PAUSED, untouched, until it resumes. Only an ACTIVE campaign
// pauses (else INVALID_STATE).
func (c *Campaigns) Pause(ctx context.Context, actor Actor, id, version int64) (*models.Campaign, error) {
	paused := models.CampaignPaused
	return c.change(ctx, actor, id, version, "campaign.pause", models.CampaignChange{State: &paused},
		[]models.CampaignState{models.CampaignActive})
}

// Resume makes a PAUSED campaign ACTIVE again.
func (c *Campaigns) Resume(ctx context.Context, actor Actor, id, version int64) (*models.Campaign, error) {
	active := models.CampaignActive
	return c.change(ctx, actor, id, version, "campaign.resume", models.CampaignChange{State: &active},
		[]models.CampaignState{models.CampaignPaused})
}

// End ends an ACTIVE or PAUSED campaign for good: its end becomes now (when
// later), it issues nothing more, and its coupons that were still valid
// expire on the expiry job's next run.
func (c *Campaigns) End(ctx context.Context, actor Actor, id, version int64) (*models.Campaign, error) {
	ended, now := models.CampaignEnded, c.now()
	return c.change(ctx, actor, id, version, "campaign.end", models.CampaignChange{State: &ended, ValidTo: &now},
		[]models.CampaignState{models.CampaignActive, models.CampaignPaused})
}

// change applies one optimistic-locking update of a campaign and its audit
// record in one transaction, and explains a refusal from the row as it is.
func (c *Campaigns) change(ctx context.Context, actor Actor, id, version int64, action string,
	change models.CampaignChange, from []models.CampaignState) (*models.Campaign, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	db := c.db.WithContext(ctx)
	camp, err := models.CampaignByID(db, actor.MerchantID, id)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("campaign %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find campaign %d: %w", id, err)
	}
	if change.ValidTo != nil && change.State == nil {
		if !change.ValidTo.After(camp.ValidFrom) {
			return nil, invalidf("validTo must be after validFrom")
		}
		if camp.State == models.CampaignEnded {
			return nil, &Error{Code: errcode.InvalidState, Message: "an ended campaign cannot be extended", Kind: ErrConflict}
		}
	}
	if change.State != nil && *change.State == models.CampaignEnded && !change.ValidTo.Before(camp.ValidTo) {
		change.ValidTo = nil // it ends later anyway; only the state changes
	}
	var ok bool
	err = db.Transaction(func(tx *gorm.DB) error {
		var err error
		if ok, err = models.UpdateCampaign(tx, actor.MerchantID, id, version, change, from...); err != nil || !ok {
			return err
		}
		if change.ValidTo != nil {
			if _, err := models.CutCouponValidity(tx, actor.MerchantID, id, *change.ValidTo); err != nil {
				return err
			}
		}
		return c.audit.record(tx, actor, action, fmt.Sprintf("campaign:%d", id), describeChange(change), nil)
	})
	if err != nil {
		return nil, fmt.Errorf("%s %d: %w", action, id, err)
	}
	now, err := models.CampaignByID(db, actor.MerchantID, id)
	if err != nil {
		return nil, fmt.Errorf("read campaign %d: %w", id, err)
	}
	if ok {
		return now, nil
	}
	switch {
	case now.Version != version:
		v := now.Version
		return nil, &Error{Code: errcode.Conflict, Kind: ErrConflict, CurrentVersion: &v,
			Message: fmt.Sprintf("the campaign changed since you read it (version %d, now %d): reload and retry", version, v)}
	case change.TotalQuantity != nil && *change.TotalQuantity < now.Issued:
		return nil, invalidf("totalQuantity %d is below the %d coupons already issued", *change.TotalQuantity, now.Issued)
	default:
		return nil, &Error{Code: errcode.InvalidState, Kind: ErrConflict,
			Message: fmt.Sprintf("the campaign is %s", strings.ToLower(string(now.State)))}
	}
}

func describeChange(c models.CampaignChange) string {
	var parts []string
	if c.Name != nil {
		parts = append(parts, fmt.Sprintf("name=%q", *c.Name))
	}
	if c.ValidTo != nil {
		parts = append(parts, "validTo="+c.ValidTo.Format(time.RFC3339))
	}
	if c.TotalQuantity != nil {
		parts = append(parts, fmt.Sprintf("totalQuantity=%d", *c.TotalQuantity))
	}
	if c.RefundWindowMinutes != nil {
		parts = append(parts, fmt.Sprintf("refundWindowMinutes=%d", *c.RefundWindowMinutes))
	}
	if c.State != nil {
		parts = append(parts, "state="+string(*c.State))
	}
	return strings.Join(parts, " ")
}
