-- +goose Up
-- Audit events name their actor's API token (NULL for the system: the CLI and
-- the jobs), so the log can be filtered by who acted. Events written before
-- this migration keep actor_id NULL: the log is append-only, even here; their
-- actor column still says which token it was.
ALTER TABLE audit_events ADD COLUMN actor_id BIGINT;
CREATE INDEX audit_events_action ON audit_events (merchant_id, action, id);
CREATE INDEX audit_events_actor ON audit_events (merchant_id, actor_id, id);

-- A resolved finding that reconciliation finds again is reopened: reopened
-- counts how often, last_seen_at is the last run that saw the discrepancy.
ALTER TABLE findings ADD COLUMN reopened INT NOT NULL DEFAULT 0;
ALTER TABLE findings ADD COLUMN last_seen_at DATETIME;
UPDATE findings SET last_seen_at = created_at;

-- The history of each finding: OPENED once, then RESOLVED (by whom, with the
-- note) and REOPENED as often as they happen. The findings row holds only the
-- current state; this table keeps what it replaced.
CREATE TABLE finding_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT      NOT NULL,
    finding_id  BIGINT      NOT NULL REFERENCES findings (id),
    action      TEXT        NOT NULL CHECK (action IN ('OPENED', 'RESOLVED', 'REOPENED')),
    actor       TEXT,
    note        TEXT,
    created_at  DATETIME NOT NULL
);
CREATE INDEX finding_events_finding ON finding_events (merchant_id, finding_id, id);
-- A finding is opened once, whichever replica's run wrote it.
CREATE UNIQUE INDEX finding_events_opened ON finding_events (merchant_id, finding_id) WHERE action = 'OPENED';
INSERT INTO finding_events (merchant_id, finding_id, action, created_at)
  SELECT merchant_id, id, 'OPENED', created_at FROM findings;
INSERT INTO finding_events (merchant_id, finding_id, action, actor, note, created_at)
  SELECT merchant_id, id, 'RESOLVED', resolved_by, note, resolved_at FROM findings WHERE status = 'RESOLVED';

-- +goose Down
DROP TABLE finding_events;
ALTER TABLE findings DROP COLUMN last_seen_at;
ALTER TABLE findings DROP COLUMN reopened;
DROP INDEX audit_events_actor;
DROP INDEX audit_events_action;
ALTER TABLE audit_events DROP COLUMN actor_id;
