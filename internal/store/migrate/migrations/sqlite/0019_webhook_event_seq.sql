-- One record's events are delivered in the order they were emitted
-- (internal/webhook, inRecordOrder). created_at is a millisecond, which two
-- events of one transaction share, and ids are random: seq numbers the
-- events as they are written (SQLite has one writer: Emit takes the
-- largest plus one, which this index finds at once).
ALTER TABLE webhook_events ADD COLUMN seq INTEGER;
UPDATE webhook_events SET seq = rowid;
CREATE UNIQUE INDEX webhook_events_seq ON webhook_events (seq);
-- The check itself looks up the record's earlier events by this index,
-- which also serves listing a record's deliveries (a handful, sorted).
DROP INDEX webhook_events_record;
CREATE INDEX webhook_events_record ON webhook_events (merchant_id, record_uuid, seq);
