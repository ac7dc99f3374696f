-- +goose Up
-- The audit log is append-only, and the database says so: any UPDATE, DELETE
-- or TRUNCATE of audit_events is refused, whatever code or person sends it.
-- +goose StatementBegin
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();

-- +goose Down
DROP TRIGGER audit_events_no_truncate ON audit_events;
DROP TRIGGER audit_events_no_change ON audit_events;
DROP FUNCTION audit_events_append_only();
