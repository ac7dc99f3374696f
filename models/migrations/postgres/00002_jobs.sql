-- +goose Up
-- One row per run of a background job. Singleton jobs set slot (their schedule
-- slot) and claim it through the unique index: whichever replica inserts first
-- runs the slot. Work jobs leave slot NULL, which never conflicts.
CREATE TABLE job_runs (
    id          BIGSERIAL PRIMARY KEY,
    job         TEXT        NOT NULL,
    slot        TEXT,
    node        TEXT        NOT NULL DEFAULT '',
    status      TEXT        NOT NULL CHECK (status IN ('RUNNING', 'SUCCEEDED', 'FAILED')),
    counts      TEXT        NOT NULL DEFAULT '{}',
    error       TEXT,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX job_runs_slot ON job_runs (job, slot);
CREATE INDEX job_runs_job ON job_runs (job, id);

-- Discrepancies found by reconciliation and compensation. dedupe_key names the
-- discrepancy, so writing it again is a no-op.
CREATE TABLE findings (
    id          BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT      NOT NULL,
    kind        TEXT        NOT NULL,
    coupon_id   BIGINT,
    redeem_no   TEXT,
    details     TEXT        NOT NULL,
    dedupe_key  TEXT        NOT NULL,
    status      TEXT        NOT NULL CHECK (status IN ('OPEN', 'RESOLVED')),
    resolved_by TEXT,
    note        TEXT,
    resolved_at TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (merchant_id, dedupe_key)
);
CREATE INDEX findings_merchant ON findings (merchant_id, id);
CREATE INDEX findings_status ON findings (merchant_id, status, id);

-- Compensation: claimed_until leases a stuck flow to one worker; fenced_at marks
-- a flow that compensation decided to release, after which it can no longer
-- succeed (see models.FinishFlow).
ALTER TABLE redemption_flows ADD COLUMN claimed_until TIMESTAMPTZ;
ALTER TABLE redemption_flows ADD COLUMN fenced_at TIMESTAMPTZ;
CREATE INDEX redemption_flows_hold ON redemption_flows (hold_until) WHERE status = 'PROCESSING';

-- +goose Down
DROP INDEX redemption_flows_hold;
ALTER TABLE redemption_flows DROP COLUMN fenced_at;
ALTER TABLE redemption_flows DROP COLUMN claimed_until;
DROP TABLE findings;
DROP TABLE job_runs;
