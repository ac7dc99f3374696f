/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** Filters for the audit log. from and to take an RFC 3339 time or a date YYYY-MM-DD in the merchant's time zone. */
export type AuditEventFilter = {
  /** Only this action. */
  action?: string | null | undefined;
  /** Only this API token's events. */
  actorId?: string | number | null | undefined;
  /** At or after this time, or from the start of this local day. */
  from?: string | null | undefined;
  /** Before this time, or through the end of this local day. */
  to?: string | null | undefined;
};

/** Whether a campaign's coupons may be issued and taken. */
export type CampaignState =
  /** Issues coupons, and its coupons are taken. */
  | 'ACTIVE'
  /** Over for good: its end was cut to when it ended, and its unused coupons expire. */
  | 'ENDED'
  /** Issues nothing; its coupons are rejected with CAMPAIGN_PAUSED, untouched, until it resumes. */
  | 'PAUSED';

/** The benefit a campaign's coupons carry. */
export type CampaignType =
  /** A fixed amount off (value, in fen), never more than the order. */
  | 'CASH'
  /** A percent off (value, 1-99), capped by maxDiscount when set. */
  | 'DISCOUNT'
  /** An item (value is the item's worth in fen). */
  | 'EXCHANGE';

/** A campaign and the version you read, to pause, resume or end it. */
export type CampaignVersionInput = {
  /** The campaign. */
  id: string | number;
  /** The version you read; a stale one is CONFLICT and changes nothing. */
  version: number;
};

/** Closes a day of the statement. */
export type CloseStatementDayInput = {
  /** The merchant's local day, YYYY-MM-DD; it must be over. */
  date: string;
};

/** Where a campaign's codes come from. */
export type CodeSource =
  /** coupond draws them: 12 random symbols and a check symbol. */
  | 'GENERATED'
  /** The merchant brings them (importCoupons, or a CSV upload): 6 to 32 of A-Z and 0-9, no check symbol. They are only as hard to guess as their source made them; the failed-lookup limits apply to them as to every code. */
  | 'IMPORTED';

/** Filters for coupons. */
export type CouponFilter = {
  /** Only this campaign's coupons. */
  campaignId?: string | number | null | undefined;
  /** Only coupons of this customer. */
  customerRef?: string | null | undefined;
  /** Only coupons redeemed (or being redeemed) at this store, refunded ones included. */
  redeemedAt?: string | number | null | undefined;
  /** Only coupons in this state. */
  status?: CouponStatus | null | undefined;
};

/** A state of the coupon state machine: UNUSED -> REDEEMING -> REDEEMED -> REFUNDED, REDEEMING -> UNUSED on failure. */
export type CouponStatus =
  /** Past validity without being used; terminal. */
  | 'EXPIRED'
  /** Used. */
  | 'REDEEMED'
  /** Held by a redemption whose outcome is not final yet. */
  | 'REDEEMING'
  /** Redemption reversed; terminal, the code stays dead. */
  | 'REFUNDED'
  /** Can be redeemed. */
  | 'UNUSED'
  /** Killed by an admin (leaked, fraud) before it was used; terminal. */
  | 'VOIDED';

/** A new campaign. Money in fen. */
export type CreateCampaignInput = {
  /** Where its codes come from; omitted means GENERATED. An IMPORTED campaign takes the merchant's own codes through importCoupons, and issueCoupons refuses it. */
  codeSource?: CodeSource | null | undefined;
  /** The merchant-local time of day the coupons can be used in; omitted means all day. Outside it is REJECTED with OUTSIDE_HOURS. */
  dailyWindow?: DailyWindowInput | null | undefined;
  /** Cap on a DISCOUNT coupon's amount off in fen; omitted or 0 means no cap. */
  maxDiscount?: number | null | undefined;
  /** Minimum order amount in fen; omitted means 0. */
  minSpend?: number | null | undefined;
  /** Display name, at most 100 characters. */
  name: string;
  /** Most successful uses per customer per day (merchant time zone), at least 1; omitted means no limit. Over it is REJECTED with CUSTOMER_LIMIT_REACHED. */
  perCustomerDailyLimit?: number | null | undefined;
  /**
   * One number with two uses: the most coupons one customer reference may be issued or imported (over it, issuing is CUSTOMER_LIMIT_EXCEEDED), and the most successful, unrefunded uses one customer may make of the campaign's coupons at redemption (over it, the redemption is REJECTED with CUSTOMER_LIMIT_REACHED). A use counts for the coupon's customer, or the request's customerRef for an anonymous coupon; a refunded use gives its allowance back. Omitted or 0 means no limit.
   *
   * With single-use coupons the two agree: a customer's coupons are at most their uses. On a multi-use campaign (usesPerCoupon above 1) it counts uses, not cards: a value below usesPerCoupon is BAD_USER_INPUT, since a customer could not finish their own card; to allow each customer k cards, give k × usesPerCoupon.
   */
  perCustomerLimit?: number | null | undefined;
  /** Most successful uses per store per day (merchant time zone), at least 1; omitted means no limit. Over it is REJECTED with STORE_DAILY_LIMIT_REACHED. */
  perStoreDailyLimit?: number | null | undefined;
  /** Minutes after redemption during which a clerk may refund; omitted means 1440, 0 means clerks may not. */
  refundWindowMinutes?: number | null | undefined;
  /** Optional idempotency key: a repeat with the same parameters returns the first result and changes nothing; other parameters under it are IDEMPOTENCY_KEY_REUSED. */
  requestId?: string | null | undefined;
  /** Whether its coupons may share an order with other coupons in redeemCoupons; omitted means false: at most one coupon of a non-stackable campaign goes on an order (NOT_STACKABLE). Fixed once created. */
  stackable?: boolean | null | undefined;
  /** Stores the campaign is limited to; omitted or empty means every store. */
  storeIds?: Array<string | number> | null | undefined;
  /** How many coupons may be issued in all. */
  totalQuantity: number;
  /** Kind of benefit. */
  type: CampaignType;
  /** Uses each coupon gives, 1-100; omitted means 1. More than 1 makes multi-use cards (次卡): each use is its own redemption, and the card is REDEEMED after its last. */
  usesPerCoupon?: number | null | undefined;
  /** Each coupon is valid for this many days (of 24 hours) from its issue, never past validTo; at least 1, omitted means until validTo. */
  validDaysAfterIssue?: number | null | undefined;
  /** Start of validity. */
  validFrom: string;
  /** End of validity (exclusive); must be after validFrom. */
  validTo: string;
  /** Amount off in fen (CASH), percent off 1-99 (DISCOUNT) or item worth in fen (EXCHANGE). */
  value: number;
  /** The merchant-local weekdays the coupons can be used on; omitted or empty means every day. Another day is REJECTED with NOT_VALID_TODAY. A day given twice is BAD_USER_INPUT; a value that is not a Weekday (FUNDAY) fails the request's validation, GRAPHQL_VALIDATION_FAILED with a message naming the field and the value ("$in.weekdays[1]: FUNDAY is not a valid Weekday"), and nothing runs. */
  weekdays?: Array<Weekday> | null | undefined;
};

/** A new API token. */
export type CreateTokenInput = {
  /** When the token stops authenticating; must be in the future. Omit for a token that does not expire. */
  expiresAt?: string | null | undefined;
  /** A label, at most 100 characters; default the role's name. */
  name?: string | null | undefined;
  /**
   * Optional client id for this request (1-64 of letters, digits, . _ : -), to retry it safely. A repeat
   * with the same parameters creates nothing and answers with the same apiToken and `token: null`: the
   * secret exists only in the first answer. The same id with other parameters is IDEMPOTENCY_KEY_REUSED.
   */
  requestId?: string | null | undefined;
  /** What the token may do. */
  role: Role;
  /** The stores of the merchant a CLERK token is bound to: required for CLERK, refused for other roles. */
  storeIds?: Array<string | number> | null | undefined;
};

/** A new endpoint. */
export type CreateWebhookEndpointInput = {
  /** What it is for, at most 500 characters. */
  description?: string | null | undefined;
  /** Event types to send, at least one. */
  events: Array<string>;
  /** Optional idempotency key: a repeat with the same parameters returns the first result and changes nothing; other parameters under it are IDEMPOTENCY_KEY_REUSED. */
  requestId?: string | null | undefined;
  /** https URL, or http to a public address; at most 2048 bytes. */
  url: string;
};

/** A time of day, in the merchant's time zone: from (inclusive) to (exclusive), each HH:MM. from after to crosses midnight (22:00 to 02:00), and the part after midnight belongs to the day the window starts on. from == to is BAD_USER_INPUT. */
export type DailyWindowInput = {
  /** Start, HH:MM. */
  from: string;
  /** End (exclusive), HH:MM. */
  to: string;
};

/** Deletes an endpoint and its deliveries. */
export type DeleteWebhookEndpointInput = {
  /** The endpoint. */
  id: string | number;
};

/** How DISCOUNT coupons, whose worth depends on the order, enter a liability's face value. */
export type DiscountValuation =
  /** At their cap (max discount), the most they can take off; a DISCOUNT coupon without a cap adds nothing and is counted in uncappedDiscountCount. */
  | 'CAP'
  /** Not counted in the face value. */
  | 'EXCLUDED';

/** A step in a finding's history. */
export type FindingAction =
  /** Reconciliation or compensation found the discrepancy. */
  | 'OPENED'
  /** Reconciliation found the resolved discrepancy again. */
  | 'REOPENED'
  /** Finance resolved it with a note. */
  | 'RESOLVED';

/** Filters for findings. */
export type FindingFilter = {
  /** Found at or after. */
  from?: string | null | undefined;
  /** Only this kind. */
  kind?: FindingKind | null | undefined;
  /** Only this state. */
  status?: FindingStatus | null | undefined;
  /** Found before. */
  to?: string | null | undefined;
};

/** A class of discrepancy between coupons, ledger and orders. */
export type FindingKind =
  /** A counter of the limits at redemption (perCustomerLimit, perCustomerDailyLimit, perStoreDailyLimit) that does not equal the held and succeeded, unrefunded uses it counts. */
  | 'ALLOWANCE_COUNT_MISMATCH'
  /** A coupon whose version or status does not match its transition history. */
  | 'HISTORY_MISMATCH'
  /** A transition along an edge the state machine does not have. */
  | 'ILLEGAL_TRANSITION'
  /** A campaign whose issued counters do not add up to its coupons. */
  | 'ISSUED_COUNT_MISMATCH'
  /** Compensation could not learn a stuck redemption's outcome from the order system. */
  | 'LOOKUP_FAILING'
  /** A live order without a succeeded, unrefunded redemption. */
  | 'ORDER_WITHOUT_REDEMPTION'
  /** A PROCESSING redemption whose coupon is not REDEEMING under it. */
  | 'PROCESSING_FLOW_COUPON_NOT_HELD'
  /** A REDEEMED or REFUNDED coupon without exactly one succeeded redemption. */
  | 'REDEEMED_COUPON_FLOW_COUNT'
  /** A REDEEMING coupon without the PROCESSING redemption that holds it. */
  | 'REDEEMING_COUPON_WITHOUT_FLOW'
  /** A succeeded, unrefunded one-shot redemption without a live order. */
  | 'REDEMPTION_WITHOUT_ORDER'
  /** A REFUNDED coupon without exactly one refund, or a refund of a coupon that is not REFUNDED. */
  | 'REFUND_COUNT'
  /** A refund whose redemption is not a succeeded redemption of the same coupon. */
  | 'REFUND_WITHOUT_REDEMPTION'
  /** A coupon REDEEMING past its hold deadline plus one compensation interval. */
  | 'STUCK_REDEEMING'
  /** A SUCCEEDED redemption whose coupon is not REDEEMED or REFUNDED under it. */
  | 'SUCCEEDED_FLOW_COUPON_NOT_REDEEMED'
  /** A webhook endpoint failed every attempt for 3 days and was disabled. */
  | 'WEBHOOK_FAILING';

/** The review state of a finding. */
export type FindingStatus =
  /** Waiting for finance. */
  | 'OPEN'
  /** Resolved with a note. */
  | 'RESOLVED';

/** Coupons to issue. */
export type IssueCouponsInput = {
  /** The campaign to issue from. */
  campaignId: string | number;
  /** Without customerRefs: how many anonymous coupons (1-1000000). With customerRefs: how many per customer (default 1). */
  count?: number | null | undefined;
  /** Bind coupons to these customer references (e.g. mini-program user ids), at most 10000. */
  customerRefs?: Array<string> | null | undefined;
  /** Optional idempotency key: a repeat with the same parameters returns the same codes and issues nothing; other parameters under it are IDEMPOTENCY_KEY_REUSED. */
  requestId?: string | null | undefined;
};

/** Filters for job runs. */
export type JobRunFilter = {
  /** Only this job. */
  job?: string | null | undefined;
  /** Only this state. */
  status?: JobRunStatus | null | undefined;
};

/** The state of a job run. */
export type JobRunStatus =
  /** Finished with an error. */
  | 'FAILED'
  /** Still running, or its process died mid-run. */
  | 'RUNNING'
  /** Finished. */
  | 'SUCCEEDED';

/** One scan of a coupon at a store. */
export type RedeemCouponInput = {
  /** The coupon code as typed or scanned. */
  code: string;
  /** Optional (required from APP tokens): the customer redeeming (at most 64 characters). A coupon issued to another customer is REJECTED with CUSTOMER_MISMATCH; the use counts against the campaign's per-customer limits. */
  customerRef?: string | null | undefined;
  /** The order amount in fen. */
  orderAmount: number;
  /** The client's id for this business request: 1-64 of letters, digits, . _ : -. Reuse it on retries. */
  requestId: string;
  /** The store. */
  storeId: string | number;
};

/** Several coupons for one order (Douyin's same-order verify): all are taken, or none. */
export type RedeemCouponsInput = {
  /** 1 to 10 coupon codes as typed or scanned, each once; their discounts apply in this order, each on what the ones before left, never below zero. More than 10, or a code twice, is BAD_USER_INPUT and writes nothing. */
  codes: Array<string>;
  /** Optional (required from APP tokens): the customer redeeming, as in RedeemCouponInput. */
  customerRef?: string | null | undefined;
  /** The order amount in fen; every coupon's minimum spend is judged against it. */
  orderAmount: number;
  /** The client's id for this order: 1-64 of letters, digits, . _ : -. Reuse it on retries; the same id with other codes, store, amount or customer is IDEMPOTENCY_KEY_REUSED. */
  requestId: string;
  /** The store. */
  storeId: string | number;
};

/** Sends an event to an endpoint again. */
export type RedeliverEventInput = {
  /** The endpoint. */
  endpointId: string | number;
  /** The event's id (evt_...), the webhook-id of every attempt. */
  eventId: string;
};

/** Filters for redemptions. */
export type RedemptionFilter = {
  /** Created at or after. */
  from?: string | null | undefined;
  /** Only this state. */
  status?: RedemptionStatus | null | undefined;
  /** Only this store. */
  storeId?: string | number | null | undefined;
  /** Created before. */
  to?: string | null | undefined;
};

/** How a redemption was made. */
export type RedemptionOperation =
  /** One-shot redeemCoupon: coupond ran the business step. */
  | 'REDEEM'
  /** Two-phase reserveCoupon: the client confirms or cancels. */
  | 'RESERVE';

/** The state of a redemption flow (核销流水). */
export type RedemptionStatus =
  /** The coupon is held; the outcome is not final yet. */
  | 'PROCESSING'
  /** The coupon could not be taken; see rejectReason. Final for its requestId. */
  | 'REJECTED'
  /** The coupon was given back (business failure, cancel, or hold timeout). */
  | 'RELEASED'
  /** Redeemed. */
  | 'SUCCEEDED';

/** Refunds a succeeded redemption. */
export type RefundRedemptionInput = {
  /** Why, at most 500 characters. */
  reason?: string | null | undefined;
  /** The redemption to reverse. */
  redeemNo: string;
  /** Issue a replacement coupon linked to the refunded one. */
  reissue?: boolean | null | undefined;
  /** The client's id for this refund; reuse it on retries. */
  requestId: string;
};

/** Why a redemption was rejected. */
export type RejectReason =
  /** The campaign is paused; the coupon is untouched and works again when it resumes. */
  | 'CAMPAIGN_PAUSED'
  /** The coupon's validity has ended. */
  | 'COUPON_EXPIRED'
  /** The coupon is held by another redemption, used, or refunded. */
  | 'COUPON_NOT_AVAILABLE'
  /** The coupon's validity has not started. */
  | 'COUPON_NOT_YET_VALID'
  /** The customer has used the campaign's perCustomerLimit, or today's perCustomerDailyLimit. */
  | 'CUSTOMER_LIMIT_REACHED'
  /** The coupon was issued to another customer than the request's customerRef. */
  | 'CUSTOMER_MISMATCH'
  /** The order amount is below the campaign's minimum spend. */
  | 'MIN_SPEND_NOT_MET'
  /** A multi-code order (redeemCoupons) already has a coupon of a campaign that is not stackable: at most one such coupon goes on an order. */
  | 'NOT_STACKABLE'
  /** Today (merchant time zone) is not one of the campaign's weekdays. */
  | 'NOT_VALID_TODAY'
  /** Now is outside the campaign's daily window (merchant time zone). */
  | 'OUTSIDE_HOURS'
  /** The store has used today's perStoreDailyLimit of the campaign. */
  | 'STORE_DAILY_LIMIT_REACHED'
  /** The campaign does not apply at this store. */
  | 'STORE_NOT_ELIGIBLE';

/** Recovers the events an endpoint missed. */
export type ReplayWebhookEventsInput = {
  /** The endpoint. */
  endpointId: string | number;
  /** Events created at or after this time, at most 30 days ago. */
  since: string;
  /** Events created before this time; default now. */
  until?: string | null | undefined;
};

/** Resolves a finding. */
export type ResolveFindingInput = {
  /** The finding. */
  findingId: string | number;
  /** What was done about it, 1 to 1000 characters. */
  note: string;
};

/** Revokes a token. */
export type RevokeTokenInput = {
  /** The token's id. */
  id: string | number;
};

/** What a token may do. */
export type Role =
  /** Everything of the merchant. */
  | 'ADMIN'
  /** A mini-program back end relaying many customers: redemptionQuote, reserveCoupon, confirmRedemption, cancelRedemption and redeemCoupon at any store of the merchant, each with a customerRef, and coupons(filter: {customerRef}) for one customer's wallet. Nothing else. Its rate limits count per customerRef as well as per token. */
  | 'APP'
  /** Redeem, reserve, confirm, cancel and refund at its own stores. */
  | 'CLERK'
  /** Read everything of the merchant; resolve reconciliation findings. */
  | 'FINANCE';

/** Rotates an endpoint's secret. */
export type RotateWebhookSecretInput = {
  /** The endpoint. */
  id: string | number;
};

/** Runs a job now. */
export type RunJobInput = {
  /** compensation, reconciliation or daily-statement. */
  job: string;
};

/** The figure of a closed day's line an adjustment corrects. */
export type StatementFigure =
  /** Coupons expired (count, face value). */
  | 'EXPIRED'
  /** Redemptions that succeeded (count, discount). */
  | 'REDEEMED'
  /** Refunds made (count, amount). */
  | 'REFUNDED'
  /** Coupons voided (count; amount 0). */
  | 'VOIDED';

/** What may change of a campaign; omitted fields stay. Its benefit never changes. */
export type UpdateCampaignInput = {
  /** The campaign. */
  id: string | number;
  /** New display name. */
  name?: string | null | undefined;
  /** New refund window in minutes. */
  refundWindowMinutes?: number | null | undefined;
  /** New total quantity; never below what was issued (BAD_USER_INPUT). */
  totalQuantity?: number | null | undefined;
  /** New end of validity (exclusive); coupons still valid past it get it too. */
  validTo?: string | null | undefined;
  /** The version you read; a stale one is CONFLICT and changes nothing. */
  version: number;
};

/** Changes an endpoint; omitted fields stay. */
export type UpdateWebhookEndpointInput = {
  /** Turn sending on or off. Turning it on sends what was pending when it was turned off; events written while it was off are not queued (replayWebhookEvents recovers them). */
  enabled?: boolean | null | undefined;
  /** New event types. */
  events?: Array<string> | null | undefined;
  /** The endpoint. */
  id: string | number;
  /** A new URL, checked like a new endpoint's. */
  url?: string | null | undefined;
};

/** An unused coupon to void. */
export type VoidCouponInput = {
  /** The code, in any case, with or without dashes. */
  code: string;
  /** Why, for the audit log; required, at most 500 characters. */
  reason: string;
  /** Optional idempotency key: a repeat returns the voided coupon and changes nothing; another code or reason under it is IDEMPOTENCY_KEY_REUSED. */
  requestId?: string | null | undefined;
};

/** Narrows webhookDeliveries. */
export type WebhookDeliveryFilter = {
  /** Only this endpoint. */
  endpointId?: string | number | null | undefined;
  /** Only this event type. */
  eventType?: string | null | undefined;
  /** From this time on. */
  from?: string | null | undefined;
  /** Only this status. */
  status?: WebhookDeliveryStatus | null | undefined;
  /** Before this time. */
  to?: string | null | undefined;
};

/** Where a delivery stands. */
export type WebhookDeliveryStatus =
  /** An attempt got a 2xx answer. */
  | 'DELIVERED'
  /** Given up: 410 Gone, or retried for 3 days. */
  | 'FAILED'
  /** Not delivered yet: waiting for its next attempt. */
  | 'PENDING';

/** A day of the week. */
export type Weekday =
  | 'FRIDAY'
  | 'MONDAY'
  | 'SATURDAY'
  | 'SUNDAY'
  | 'THURSDAY'
  | 'TUESDAY'
  | 'WEDNESDAY';

export type ViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ViewerQuery = { viewer: { role: Role, storeIds: Array<string>, merchant: { id: string, name: string, timezone: string } }, stores: { edges: Array<{ node: { id: string, code: string, name: string } }> } };

export type RefundRedemptionMutationVariables = Exact<{
  input: RefundRedemptionInput;
}>;


export type RefundRedemptionMutation = { refundRedemption: { refundNo: string, requestId: string, status: RedemptionStatus, amount: number, reason: string, createdAt: string, reissuedCoupon: { code: string } | null, redemption: { redeemNo: string, refund: { refundNo: string } | null, coupon: { id: string, status: CouponStatus, version: number } } } };

export type AuditEventsQueryVariables = Exact<{
  filter?: AuditEventFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type AuditEventsQuery = { auditEvents: { edges: Array<{ cursor: string, node: { id: string, action: string, actor: string, actorId: string | null, target: string, detail: string, requestId: string | null, createdAt: string } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type CampaignsQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type CampaignsQuery = { campaigns: { edges: Array<{ cursor: string, node: { id: string, name: string, type: CampaignType, value: number, maxDiscount: number, minSpend: number, validFrom: string, validTo: string, totalQuantity: number, issued: number, reissued: number, perCustomerLimit: number, refundWindowMinutes: number, state: CampaignState, version: number, codeSource: CodeSource, createdAt: string, stores: Array<{ id: string, name: string }> } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type IssueCouponsMutationVariables = Exact<{
  input: IssueCouponsInput;
}>;


export type IssueCouponsMutation = { issueCoupons: { issued: number, codes: Array<string>, campaign: { id: string, issued: number, totalQuantity: number, version: number } } };

export type UpdateCampaignMutationVariables = Exact<{
  input: UpdateCampaignInput;
}>;


export type UpdateCampaignMutation = { updateCampaign: { id: string, name: string, validTo: string, totalQuantity: number, refundWindowMinutes: number, state: CampaignState, version: number } };

export type PauseCampaignMutationVariables = Exact<{
  input: CampaignVersionInput;
}>;


export type PauseCampaignMutation = { pauseCampaign: { id: string, name: string, state: CampaignState, version: number } };

export type ResumeCampaignMutationVariables = Exact<{
  input: CampaignVersionInput;
}>;


export type ResumeCampaignMutation = { resumeCampaign: { id: string, name: string, state: CampaignState, version: number } };

export type EndCampaignMutationVariables = Exact<{
  input: CampaignVersionInput;
}>;


export type EndCampaignMutation = { endCampaign: { id: string, name: string, validTo: string, state: CampaignState, version: number } };

export type CouponDetailQueryVariables = Exact<{
  code: string;
}>;


export type CouponDetailQuery = { coupon: { id: string, code: string, status: CouponStatus, version: number, customerRef: string | null, validFrom: string, validTo: string, usesTotal: number, usesLeft: number, usableNextAt: string | null, createdAt: string, campaign: { id: string, name: string, type: CampaignType, value: number, maxDiscount: number, minSpend: number, refundWindowMinutes: number, stores: Array<{ id: string, name: string }> }, transitions: Array<{ fromStatus: CouponStatus, toStatus: CouponStatus, versionAfter: number, flowNo: string, actor: string, createdAt: string, store: { id: string, name: string } | null }>, redemptions: Array<{ redeemNo: string, requestId: string, operation: RedemptionOperation, status: RedemptionStatus, useNo: number, customerRef: string | null, rejectReason: RejectReason | null, releaseReason: string | null, orderAmount: number, discountAmount: number, orderRef: string | null, createdAt: string, finishedAt: string | null, store: { id: string, name: string }, operator: { id: string, name: string, role: Role } | null, refund: { refundNo: string } | null }>, refunds: Array<{ refundNo: string, requestId: string, status: RedemptionStatus, amount: number, reason: string, createdAt: string, redemption: { redeemNo: string }, reissuedCoupon: { code: string } | null, operator: { id: string, name: string, role: Role } | null }> } };

export type VoidCouponMutationVariables = Exact<{
  input: VoidCouponInput;
}>;


export type VoidCouponMutation = { voidCoupon: { id: string, code: string, status: CouponStatus, version: number } };

export type CouponsQueryVariables = Exact<{
  filter?: CouponFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type CouponsQuery = { coupons: { edges: Array<{ cursor: string, node: { id: string, code: string, status: CouponStatus, version: number, customerRef: string | null, validTo: string, createdAt: string, campaign: { id: string, name: string } } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type CampaignNamesQueryVariables = Exact<{ [key: string]: never; }>;


export type CampaignNamesQuery = { campaigns: { edges: Array<{ node: { id: string, name: string } }> } };

export type CreateCampaignMutationVariables = Exact<{
  input: CreateCampaignInput;
}>;


export type CreateCampaignMutation = { createCampaign: { id: string, name: string } };

export type CampaignForImportQueryVariables = Exact<{
  id: string | number;
}>;


export type CampaignForImportQuery = { campaign: { id: string, name: string, codeSource: CodeSource, state: CampaignState, issued: number, totalQuantity: number } | null };

export type JobRunsQueryVariables = Exact<{
  filter?: JobRunFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type JobRunsQuery = { jobs: Array<string>, jobRuns: { edges: Array<{ cursor: string, node: { id: string, job: string, slot: string | null, node: string, status: JobRunStatus, error: string | null, startedAt: string, finishedAt: string | null, counts: Array<{ name: string, value: number }> } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type RunJobMutationVariables = Exact<{
  input: RunJobInput;
}>;


export type RunJobMutation = { runJob: { id: string, job: string, status: JobRunStatus, error: string | null, startedAt: string, finishedAt: string | null, counts: Array<{ name: string, value: number }> } };

export type ReadReplicasQueryVariables = Exact<{ [key: string]: never; }>;


export type ReadReplicasQuery = { readReplicas: Array<{ name: string, up: boolean, serving: boolean, error: string | null, inRecovery: boolean, replayPaused: boolean, lagSeconds: number }> };

export type WeekByHourQueryVariables = Exact<{
  from: string;
  to: string;
}>;


export type WeekByHourQuery = { redemptionsByHour: Array<{ hour: string, redeemed: number }> };

export type TodayQueryVariables = Exact<{
  day: string;
}>;


export type TodayQuery = { statements: { stores: Array<{ redeemedCount: number, redeemedAmount: number, refundedCount: number, refundedAmount: number, store: { id: string } }>, lapsed: Array<{ expiredCount: number, expiredValue: number, voidedCount: number }> } };

export type LiabilityQueryVariables = Exact<{ [key: string]: never; }>;


export type LiabilityQuery = { liability: { at: string, unusedCount: number, faceValue: number, discountCouponsAt: DiscountValuation, uncappedDiscountCount: number } };

export type InFlightQueryVariables = Exact<{ [key: string]: never; }>;


export type InFlightQuery = { redemptions: { edges: Array<{ node: { redeemNo: string, createdAt: string } }>, pageInfo: { hasNextPage: boolean } } };

export type OpenFindingsQueryVariables = Exact<{ [key: string]: never; }>;


export type OpenFindingsQuery = { findings: { edges: Array<{ node: { id: string } }>, pageInfo: { hasNextPage: boolean } } };

export type LastRunsQueryVariables = Exact<{ [key: string]: never; }>;


export type LastRunsQuery = { jobRuns: { edges: Array<{ node: { id: string, job: string, status: JobRunStatus, error: string | null, startedAt: string, finishedAt: string | null, counts: Array<{ name: string, value: number }> } }> } };

export type FindingsQueryVariables = Exact<{
  filter?: FindingFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type FindingsQuery = { findings: { edges: Array<{ cursor: string, node: { id: string, kind: FindingKind, status: FindingStatus, redeemNo: string | null, details: string, createdAt: string, resolvedBy: string | null, note: string | null, resolvedAt: string | null, reopened: number, history: Array<{ action: FindingAction, at: string, by: string | null, note: string | null }>, coupon: { id: string, code: string, status: CouponStatus, version: number } | null, redemption: { redeemNo: string, status: RedemptionStatus, orderAmount: number, discountAmount: number, orderRef: string | null, createdAt: string, finishedAt: string | null, store: { id: string, name: string } } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type ResolveFindingMutationVariables = Exact<{
  input: ResolveFindingInput;
}>;


export type ResolveFindingMutation = { resolveFinding: { id: string, status: FindingStatus, note: string | null, resolvedBy: string | null, resolvedAt: string | null } };

export type StatementQueryVariables = Exact<{
  from: string;
  to: string;
  storeId?: string | number | null | undefined;
}>;


export type StatementQuery = { statements: { timezone: string, from: string, to: string, closedDays: Array<string>, stores: Array<{ day: string, redeemedCount: number, redeemedAmount: number, refundedCount: number, refundedAmount: number, netCount: number, netAmount: number, stored: boolean, closed: boolean, store: { id: string, name: string } }>, campaigns: Array<{ day: string, redeemedCount: number, redeemedAmount: number, refundedCount: number, refundedAmount: number, netCount: number, netAmount: number, stored: boolean, closed: boolean, store: { id: string, name: string }, campaign: { id: string, name: string } | null }>, lapsed: Array<{ day: string, expiredCount: number, expiredValue: number, voidedCount: number, stored: boolean, closed: boolean, campaign: { id: string, name: string } }>, adjustments: Array<{ day: string, closedDay: string, figure: StatementFigure, count: number, amount: number, store: { id: string, name: string } | null, campaign: { id: string, name: string } }> } };

export type CloseStatementDayMutationVariables = Exact<{
  input: CloseStatementDayInput;
}>;


export type CloseStatementDayMutation = { closeStatementDay: { from: string, to: string, closedDays: Array<string> } };

export type CouponPreviewQueryVariables = Exact<{
  code: string;
}>;


export type CouponPreviewQuery = { coupon: { id: string, code: string, status: CouponStatus, version: number, validFrom: string, validTo: string, campaign: { id: string, name: string, type: CampaignType, value: number, maxDiscount: number, minSpend: number, refundWindowMinutes: number } } };

export type RedemptionQuoteQueryVariables = Exact<{
  code: string;
  storeId: string | number;
  orderAmount: number;
}>;


export type RedemptionQuoteQuery = { redemptionQuote: { eligible: boolean, rejectReason: RejectReason | null, discountAmount: number, payAmount: number } };

export type RedeemCouponMutationVariables = Exact<{
  input: RedeemCouponInput;
}>;


export type RedeemCouponMutation = { redeemCoupon: { redeemNo: string, requestId: string, status: RedemptionStatus, rejectReason: RejectReason | null, releaseReason: string | null, orderAmount: number, discountAmount: number, orderRef: string | null, createdAt: string, finishedAt: string | null, store: { id: string, name: string }, coupon: { id: string, code: string, status: CouponStatus, version: number } } };

export type CouponsQuoteQueryVariables = Exact<{
  codes: Array<string> | string;
  storeId: string | number;
  orderAmount: number;
}>;


export type CouponsQuoteQuery = { quoteCoupons: { eligible: boolean, discountAmount: number, amountToPay: number, quotes: Array<{ eligible: boolean, rejectReason: RejectReason | null, reasons: Array<RejectReason>, discountAmount: number, coupon: { id: string, code: string, status: CouponStatus, campaign: { id: string, name: string } } }> } };

export type RedeemCouponsMutationVariables = Exact<{
  input: RedeemCouponsInput;
}>;


export type RedeemCouponsMutation = { redeemCoupons: { status: RedemptionStatus, requestId: string, discountAmount: number, amountToPay: number, orderRef: string | null, redemptions: Array<{ redeemNo: string, status: RedemptionStatus, releaseReason: string | null, discountAmount: number, coupon: { id: string, code: string, status: CouponStatus, version: number } }>, reasons: Array<{ code: string, rejectReason: RejectReason | null, reasons: Array<RejectReason> }> } };

export type RedemptionsQueryVariables = Exact<{
  filter?: RedemptionFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type RedemptionsQuery = { redemptions: { edges: Array<{ cursor: string, node: { redeemNo: string, requestId: string, operation: RedemptionOperation, status: RedemptionStatus, rejectReason: RejectReason | null, releaseReason: string | null, orderAmount: number, discountAmount: number, orderRef: string | null, createdAt: string, finishedAt: string | null, operator: { id: string, name: string, role: Role } | null, store: { id: string, name: string }, coupon: { id: string, code: string, campaign: { id: string, name: string } }, refund: { refundNo: string, amount: number, createdAt: string } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type TokensQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type TokensQuery = { tokens: { edges: Array<{ cursor: string, node: { id: string, name: string, role: Role, createdAt: string, lastUsedAt: string | null, expiresAt: string | null, revokedAt: string | null, stores: Array<{ id: string, name: string }> } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type CreateTokenMutationVariables = Exact<{
  input: CreateTokenInput;
}>;


export type CreateTokenMutation = { createToken: { token: string | null, apiToken: { id: string, name: string, role: Role, createdAt: string, expiresAt: string | null, revokedAt: string | null } } };

export type RevokeTokenMutationVariables = Exact<{
  input: RevokeTokenInput;
}>;


export type RevokeTokenMutation = { revokeToken: { id: string, name: string, revokedAt: string | null } };

export type WebhookEndpointsQueryVariables = Exact<{ [key: string]: never; }>;


export type WebhookEndpointsQuery = { webhookEndpoints: Array<{ id: string, url: string, description: string, events: Array<string>, enabled: boolean, disabledReason: string | null, previousSecretUntil: string | null, createdAt: string }> };

export type CreateWebhookEndpointMutationVariables = Exact<{
  input: CreateWebhookEndpointInput;
}>;


export type CreateWebhookEndpointMutation = { createWebhookEndpoint: { secret: string, endpoint: { id: string, url: string, events: Array<string>, enabled: boolean } } };

export type UpdateWebhookEndpointMutationVariables = Exact<{
  input: UpdateWebhookEndpointInput;
}>;


export type UpdateWebhookEndpointMutation = { updateWebhookEndpoint: { id: string, enabled: boolean, disabledReason: string | null } };

export type RotateWebhookSecretMutationVariables = Exact<{
  input: RotateWebhookSecretInput;
}>;


export type RotateWebhookSecretMutation = { rotateWebhookSecret: { secret: string, endpoint: { id: string, previousSecretUntil: string | null } } };

export type DeleteWebhookEndpointMutationVariables = Exact<{
  input: DeleteWebhookEndpointInput;
}>;


export type DeleteWebhookEndpointMutation = { deleteWebhookEndpoint: { id: string } };

export type ReplayWebhookEventsMutationVariables = Exact<{
  input: ReplayWebhookEventsInput;
}>;


export type ReplayWebhookEventsMutation = { replayWebhookEvents: { queued: number, endpoint: { id: string, url: string } } };

export type WebhookDeliveriesQueryVariables = Exact<{
  filter?: WebhookDeliveryFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type WebhookDeliveriesQuery = { webhookDeliveries: { edges: Array<{ cursor: string, node: { eventId: string, eventType: string, endpointId: string, status: WebhookDeliveryStatus, attempts: number, lastStatusCode: number | null, lastError: string | null, lastAttemptAt: string | null, nextAttemptAt: string | null, responseBody: string | null, deliveredAt: string | null, createdAt: string } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type RedeliverEventMutationVariables = Exact<{
  input: RedeliverEventInput;
}>;


export type RedeliverEventMutation = { redeliverEvent: { eventId: string, status: WebhookDeliveryStatus } };


export const ViewerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"storeIds"}},{"kind":"Field","name":{"kind":"Name","value":"merchant"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"timezone"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"stores"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ViewerQuery, ViewerQueryVariables>;
export const RefundRedemptionDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RefundRedemption"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RefundRedemptionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refundRedemption"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refundNo"}},{"kind":"Field","name":{"kind":"Name","value":"requestId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"reissuedCoupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}}]}},{"kind":"Field","name":{"kind":"Name","value":"redemption"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"refund"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refundNo"}}]}},{"kind":"Field","name":{"kind":"Name","value":"coupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]}}]}}]} as unknown as DocumentNode<RefundRedemptionMutation, RefundRedemptionMutationVariables>;
export const AuditEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AuditEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"AuditEventFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"auditEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"action"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"actorId"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"detail"}},{"kind":"Field","name":{"kind":"Name","value":"requestId"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<AuditEventsQuery, AuditEventsQueryVariables>;
export const CampaignsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Campaigns"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"campaigns"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"maxDiscount"}},{"kind":"Field","name":{"kind":"Name","value":"minSpend"}},{"kind":"Field","name":{"kind":"Name","value":"validFrom"}},{"kind":"Field","name":{"kind":"Name","value":"validTo"}},{"kind":"Field","name":{"kind":"Name","value":"totalQuantity"}},{"kind":"Field","name":{"kind":"Name","value":"issued"}},{"kind":"Field","name":{"kind":"Name","value":"reissued"}},{"kind":"Field","name":{"kind":"Name","value":"perCustomerLimit"}},{"kind":"Field","name":{"kind":"Name","value":"refundWindowMinutes"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"codeSource"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"stores"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<CampaignsQuery, CampaignsQueryVariables>;
export const IssueCouponsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"IssueCoupons"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"IssueCouponsInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"issueCoupons"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"issued"}},{"kind":"Field","name":{"kind":"Name","value":"codes"}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"issued"}},{"kind":"Field","name":{"kind":"Name","value":"totalQuantity"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]}}]} as unknown as DocumentNode<IssueCouponsMutation, IssueCouponsMutationVariables>;
export const UpdateCampaignDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateCampaign"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateCampaignInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateCampaign"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"validTo"}},{"kind":"Field","name":{"kind":"Name","value":"totalQuantity"}},{"kind":"Field","name":{"kind":"Name","value":"refundWindowMinutes"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]} as unknown as DocumentNode<UpdateCampaignMutation, UpdateCampaignMutationVariables>;
export const PauseCampaignDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"PauseCampaign"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CampaignVersionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pauseCampaign"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]} as unknown as DocumentNode<PauseCampaignMutation, PauseCampaignMutationVariables>;
export const ResumeCampaignDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ResumeCampaign"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CampaignVersionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resumeCampaign"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]} as unknown as DocumentNode<ResumeCampaignMutation, ResumeCampaignMutationVariables>;
export const EndCampaignDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"EndCampaign"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CampaignVersionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"endCampaign"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"validTo"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]} as unknown as DocumentNode<EndCampaignMutation, EndCampaignMutationVariables>;
export const CouponDetailDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CouponDetail"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"code"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"coupon"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"code"},"value":{"kind":"Variable","name":{"kind":"Name","value":"code"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"customerRef"}},{"kind":"Field","name":{"kind":"Name","value":"validFrom"}},{"kind":"Field","name":{"kind":"Name","value":"validTo"}},{"kind":"Field","name":{"kind":"Name","value":"usesTotal"}},{"kind":"Field","name":{"kind":"Name","value":"usesLeft"}},{"kind":"Field","name":{"kind":"Name","value":"usableNextAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"maxDiscount"}},{"kind":"Field","name":{"kind":"Name","value":"minSpend"}},{"kind":"Field","name":{"kind":"Name","value":"refundWindowMinutes"}},{"kind":"Field","name":{"kind":"Name","value":"stores"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"transitions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fromStatus"}},{"kind":"Field","name":{"kind":"Name","value":"toStatus"}},{"kind":"Field","name":{"kind":"Name","value":"versionAfter"}},{"kind":"Field","name":{"kind":"Name","value":"flowNo"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"redemptions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"requestId"}},{"kind":"Field","name":{"kind":"Name","value":"operation"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"useNo"}},{"kind":"Field","name":{"kind":"Name","value":"customerRef"}},{"kind":"Field","name":{"kind":"Name","value":"rejectReason"}},{"kind":"Field","name":{"kind":"Name","value":"releaseReason"}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"orderAmount"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"orderRef"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"operator"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}}]}},{"kind":"Field","name":{"kind":"Name","value":"refund"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refundNo"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"refunds"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refundNo"}},{"kind":"Field","name":{"kind":"Name","value":"requestId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"redemption"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}}]}},{"kind":"Field","name":{"kind":"Name","value":"reissuedCoupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}}]}},{"kind":"Field","name":{"kind":"Name","value":"operator"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}}]}}]}}]}}]}}]} as unknown as DocumentNode<CouponDetailQuery, CouponDetailQueryVariables>;
export const VoidCouponDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"VoidCoupon"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"VoidCouponInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"voidCoupon"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]} as unknown as DocumentNode<VoidCouponMutation, VoidCouponMutationVariables>;
export const CouponsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Coupons"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"CouponFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"coupons"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"customerRef"}},{"kind":"Field","name":{"kind":"Name","value":"validTo"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<CouponsQuery, CouponsQueryVariables>;
export const CampaignNamesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CampaignNames"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"campaigns"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]} as unknown as DocumentNode<CampaignNamesQuery, CampaignNamesQueryVariables>;
export const CreateCampaignDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateCampaign"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateCampaignInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createCampaign"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<CreateCampaignMutation, CreateCampaignMutationVariables>;
export const CampaignForImportDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CampaignForImport"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"campaign"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"codeSource"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"issued"}},{"kind":"Field","name":{"kind":"Name","value":"totalQuantity"}}]}}]}}]} as unknown as DocumentNode<CampaignForImportQuery, CampaignForImportQueryVariables>;
export const JobRunsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"JobRuns"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"JobRunFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobRuns"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"job"}},{"kind":"Field","name":{"kind":"Name","value":"slot"}},{"kind":"Field","name":{"kind":"Name","value":"node"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"startedAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"counts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"jobs"}}]}}]} as unknown as DocumentNode<JobRunsQuery, JobRunsQueryVariables>;
export const RunJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RunJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RunJobInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"runJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"job"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"startedAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"counts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}}]}}]}}]} as unknown as DocumentNode<RunJobMutation, RunJobMutationVariables>;
export const ReadReplicasDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ReadReplicas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"readReplicas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"up"}},{"kind":"Field","name":{"kind":"Name","value":"serving"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"inRecovery"}},{"kind":"Field","name":{"kind":"Name","value":"replayPaused"}},{"kind":"Field","name":{"kind":"Name","value":"lagSeconds"}}]}}]}}]} as unknown as DocumentNode<ReadReplicasQuery, ReadReplicasQueryVariables>;
export const WeekByHourDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WeekByHour"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redemptionsByHour"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hour"}},{"kind":"Field","name":{"kind":"Name","value":"redeemed"}}]}}]}}]} as unknown as DocumentNode<WeekByHourQuery, WeekByHourQueryVariables>;
export const TodayDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Today"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"day"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"statements"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"day"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"day"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"stores"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"redeemedCount"}},{"kind":"Field","name":{"kind":"Name","value":"redeemedAmount"}},{"kind":"Field","name":{"kind":"Name","value":"refundedCount"}},{"kind":"Field","name":{"kind":"Name","value":"refundedAmount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"lapsed"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"expiredCount"}},{"kind":"Field","name":{"kind":"Name","value":"expiredValue"}},{"kind":"Field","name":{"kind":"Name","value":"voidedCount"}}]}}]}}]}}]} as unknown as DocumentNode<TodayQuery, TodayQueryVariables>;
export const LiabilityDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Liability"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"liability"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"unusedCount"}},{"kind":"Field","name":{"kind":"Name","value":"faceValue"}},{"kind":"Field","name":{"kind":"Name","value":"discountCouponsAt"}},{"kind":"Field","name":{"kind":"Name","value":"uncappedDiscountCount"}}]}}]}}]} as unknown as DocumentNode<LiabilityQuery, LiabilityQueryVariables>;
export const InFlightDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"InFlight"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redemptions"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"status"},"value":{"kind":"EnumValue","value":"PROCESSING"}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}}]}}]}}]}}]} as unknown as DocumentNode<InFlightQuery, InFlightQueryVariables>;
export const OpenFindingsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"OpenFindings"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"findings"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"status"},"value":{"kind":"EnumValue","value":"OPEN"}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}}]}}]}}]}}]} as unknown as DocumentNode<OpenFindingsQuery, OpenFindingsQueryVariables>;
export const LastRunsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"LastRuns"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobRuns"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"6"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"job"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"startedAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"counts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<LastRunsQuery, LastRunsQueryVariables>;
export const FindingsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Findings"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"FindingFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"findings"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"details"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"resolvedBy"}},{"kind":"Field","name":{"kind":"Name","value":"note"}},{"kind":"Field","name":{"kind":"Name","value":"resolvedAt"}},{"kind":"Field","name":{"kind":"Name","value":"reopened"}},{"kind":"Field","name":{"kind":"Name","value":"history"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"action"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"by"}},{"kind":"Field","name":{"kind":"Name","value":"note"}}]}},{"kind":"Field","name":{"kind":"Name","value":"coupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}},{"kind":"Field","name":{"kind":"Name","value":"redemption"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"orderAmount"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"orderRef"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<FindingsQuery, FindingsQueryVariables>;
export const ResolveFindingDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ResolveFinding"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ResolveFindingInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resolveFinding"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"note"}},{"kind":"Field","name":{"kind":"Name","value":"resolvedBy"}},{"kind":"Field","name":{"kind":"Name","value":"resolvedAt"}}]}}]}}]} as unknown as DocumentNode<ResolveFindingMutation, ResolveFindingMutationVariables>;
export const StatementDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Statement"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"storeId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"statements"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"storeId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"storeId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"timezone"}},{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"closedDays"}},{"kind":"Field","name":{"kind":"Name","value":"stores"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"redeemedCount"}},{"kind":"Field","name":{"kind":"Name","value":"redeemedAmount"}},{"kind":"Field","name":{"kind":"Name","value":"refundedCount"}},{"kind":"Field","name":{"kind":"Name","value":"refundedAmount"}},{"kind":"Field","name":{"kind":"Name","value":"netCount"}},{"kind":"Field","name":{"kind":"Name","value":"netAmount"}},{"kind":"Field","name":{"kind":"Name","value":"stored"}},{"kind":"Field","name":{"kind":"Name","value":"closed"}}]}},{"kind":"Field","name":{"kind":"Name","value":"campaigns"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"redeemedCount"}},{"kind":"Field","name":{"kind":"Name","value":"redeemedAmount"}},{"kind":"Field","name":{"kind":"Name","value":"refundedCount"}},{"kind":"Field","name":{"kind":"Name","value":"refundedAmount"}},{"kind":"Field","name":{"kind":"Name","value":"netCount"}},{"kind":"Field","name":{"kind":"Name","value":"netAmount"}},{"kind":"Field","name":{"kind":"Name","value":"stored"}},{"kind":"Field","name":{"kind":"Name","value":"closed"}}]}},{"kind":"Field","name":{"kind":"Name","value":"lapsed"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"expiredCount"}},{"kind":"Field","name":{"kind":"Name","value":"expiredValue"}},{"kind":"Field","name":{"kind":"Name","value":"voidedCount"}},{"kind":"Field","name":{"kind":"Name","value":"stored"}},{"kind":"Field","name":{"kind":"Name","value":"closed"}}]}},{"kind":"Field","name":{"kind":"Name","value":"adjustments"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"closedDay"}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"figure"}},{"kind":"Field","name":{"kind":"Name","value":"count"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]}}]} as unknown as DocumentNode<StatementQuery, StatementQueryVariables>;
export const CloseStatementDayDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CloseStatementDay"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CloseStatementDayInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"closeStatementDay"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"closedDays"}}]}}]}}]} as unknown as DocumentNode<CloseStatementDayMutation, CloseStatementDayMutationVariables>;
export const CouponPreviewDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CouponPreview"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"code"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"coupon"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"code"},"value":{"kind":"Variable","name":{"kind":"Name","value":"code"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"validFrom"}},{"kind":"Field","name":{"kind":"Name","value":"validTo"}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"maxDiscount"}},{"kind":"Field","name":{"kind":"Name","value":"minSpend"}},{"kind":"Field","name":{"kind":"Name","value":"refundWindowMinutes"}}]}}]}}]}}]} as unknown as DocumentNode<CouponPreviewQuery, CouponPreviewQueryVariables>;
export const RedemptionQuoteDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RedemptionQuote"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"code"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"storeId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"orderAmount"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redemptionQuote"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"code"},"value":{"kind":"Variable","name":{"kind":"Name","value":"code"}}},{"kind":"Argument","name":{"kind":"Name","value":"storeId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"storeId"}}},{"kind":"Argument","name":{"kind":"Name","value":"orderAmount"},"value":{"kind":"Variable","name":{"kind":"Name","value":"orderAmount"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"eligible"}},{"kind":"Field","name":{"kind":"Name","value":"rejectReason"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"payAmount"}}]}}]}}]} as unknown as DocumentNode<RedemptionQuoteQuery, RedemptionQuoteQueryVariables>;
export const RedeemCouponDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RedeemCoupon"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RedeemCouponInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemCoupon"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"requestId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"rejectReason"}},{"kind":"Field","name":{"kind":"Name","value":"releaseReason"}},{"kind":"Field","name":{"kind":"Name","value":"orderAmount"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"orderRef"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"coupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}}]}}]} as unknown as DocumentNode<RedeemCouponMutation, RedeemCouponMutationVariables>;
export const CouponsQuoteDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CouponsQuote"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"codes"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"storeId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"orderAmount"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"quoteCoupons"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"codes"},"value":{"kind":"Variable","name":{"kind":"Name","value":"codes"}}},{"kind":"Argument","name":{"kind":"Name","value":"storeId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"storeId"}}},{"kind":"Argument","name":{"kind":"Name","value":"orderAmount"},"value":{"kind":"Variable","name":{"kind":"Name","value":"orderAmount"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"eligible"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"amountToPay"}},{"kind":"Field","name":{"kind":"Name","value":"quotes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"eligible"}},{"kind":"Field","name":{"kind":"Name","value":"rejectReason"}},{"kind":"Field","name":{"kind":"Name","value":"reasons"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"coupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<CouponsQuoteQuery, CouponsQuoteQueryVariables>;
export const RedeemCouponsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RedeemCoupons"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RedeemCouponsInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemCoupons"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"requestId"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"amountToPay"}},{"kind":"Field","name":{"kind":"Name","value":"orderRef"}},{"kind":"Field","name":{"kind":"Name","value":"redemptions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"releaseReason"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"coupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"reasons"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"rejectReason"}},{"kind":"Field","name":{"kind":"Name","value":"reasons"}}]}}]}}]}}]} as unknown as DocumentNode<RedeemCouponsMutation, RedeemCouponsMutationVariables>;
export const RedemptionsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Redemptions"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"RedemptionFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redemptions"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeemNo"}},{"kind":"Field","name":{"kind":"Name","value":"requestId"}},{"kind":"Field","name":{"kind":"Name","value":"operation"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"rejectReason"}},{"kind":"Field","name":{"kind":"Name","value":"releaseReason"}},{"kind":"Field","name":{"kind":"Name","value":"orderAmount"}},{"kind":"Field","name":{"kind":"Name","value":"discountAmount"}},{"kind":"Field","name":{"kind":"Name","value":"orderRef"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}},{"kind":"Field","name":{"kind":"Name","value":"operator"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}}]}},{"kind":"Field","name":{"kind":"Name","value":"store"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"coupon"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"campaign"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"refund"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refundNo"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<RedemptionsQuery, RedemptionsQueryVariables>;
export const TokensDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Tokens"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tokens"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUsedAt"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}},{"kind":"Field","name":{"kind":"Name","value":"stores"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<TokensQuery, TokensQueryVariables>;
export const CreateTokenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateToken"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateTokenInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"token"}},{"kind":"Field","name":{"kind":"Name","value":"apiToken"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}}]}}]}}]}}]} as unknown as DocumentNode<CreateTokenMutation, CreateTokenMutationVariables>;
export const RevokeTokenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RevokeToken"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RevokeTokenInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"revokeToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}}]}}]}}]} as unknown as DocumentNode<RevokeTokenMutation, RevokeTokenMutationVariables>;
export const WebhookEndpointsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WebhookEndpoints"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"webhookEndpoints"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"events"}},{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"disabledReason"}},{"kind":"Field","name":{"kind":"Name","value":"previousSecretUntil"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<WebhookEndpointsQuery, WebhookEndpointsQueryVariables>;
export const CreateWebhookEndpointDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateWebhookEndpoint"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateWebhookEndpointInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createWebhookEndpoint"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"endpoint"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"events"}},{"kind":"Field","name":{"kind":"Name","value":"enabled"}}]}},{"kind":"Field","name":{"kind":"Name","value":"secret"}}]}}]}}]} as unknown as DocumentNode<CreateWebhookEndpointMutation, CreateWebhookEndpointMutationVariables>;
export const UpdateWebhookEndpointDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateWebhookEndpoint"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateWebhookEndpointInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateWebhookEndpoint"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"disabledReason"}}]}}]}}]} as unknown as DocumentNode<UpdateWebhookEndpointMutation, UpdateWebhookEndpointMutationVariables>;
export const RotateWebhookSecretDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RotateWebhookSecret"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RotateWebhookSecretInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rotateWebhookSecret"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"endpoint"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"previousSecretUntil"}}]}},{"kind":"Field","name":{"kind":"Name","value":"secret"}}]}}]}}]} as unknown as DocumentNode<RotateWebhookSecretMutation, RotateWebhookSecretMutationVariables>;
export const DeleteWebhookEndpointDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteWebhookEndpoint"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"DeleteWebhookEndpointInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteWebhookEndpoint"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<DeleteWebhookEndpointMutation, DeleteWebhookEndpointMutationVariables>;
export const ReplayWebhookEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ReplayWebhookEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ReplayWebhookEventsInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"replayWebhookEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"endpoint"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"url"}}]}},{"kind":"Field","name":{"kind":"Name","value":"queued"}}]}}]}}]} as unknown as DocumentNode<ReplayWebhookEventsMutation, ReplayWebhookEventsMutationVariables>;
export const WebhookDeliveriesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WebhookDeliveries"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"WebhookDeliveryFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"webhookDeliveries"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"eventId"}},{"kind":"Field","name":{"kind":"Name","value":"eventType"}},{"kind":"Field","name":{"kind":"Name","value":"endpointId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"attempts"}},{"kind":"Field","name":{"kind":"Name","value":"lastStatusCode"}},{"kind":"Field","name":{"kind":"Name","value":"lastError"}},{"kind":"Field","name":{"kind":"Name","value":"lastAttemptAt"}},{"kind":"Field","name":{"kind":"Name","value":"nextAttemptAt"}},{"kind":"Field","name":{"kind":"Name","value":"responseBody"}},{"kind":"Field","name":{"kind":"Name","value":"deliveredAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<WebhookDeliveriesQuery, WebhookDeliveriesQueryVariables>;
export const RedeliverEventDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RedeliverEvent"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RedeliverEventInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"redeliverEvent"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"eventId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]} as unknown as DocumentNode<RedeliverEventMutation, RedeliverEventMutationVariables>;