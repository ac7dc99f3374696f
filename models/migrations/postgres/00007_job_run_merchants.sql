-- +goose Up
-- A job run belongs to one merchant, or to the whole installation (merchant_id
-- NULL): a merchant sees only its own runs. An installation run that did
-- something for a merchant writes that merchant a row of its own with the
-- merchant's counts, linked to it by parent_id; a quiet run writes none.
ALTER TABLE job_runs ADD COLUMN merchant_id BIGINT;
ALTER TABLE job_runs ADD COLUMN parent_id BIGINT;
CREATE INDEX job_runs_merchant ON job_runs (merchant_id, id);

-- +goose Down
DROP INDEX job_runs_merchant;
ALTER TABLE job_runs DROP COLUMN parent_id;
ALTER TABLE job_runs DROP COLUMN merchant_id;
