-- Every merchant-owned row names its merchant (DESIGN.md, "Storage"): the
-- three tables that reached theirs through another table (an app, a journal
-- entry, a webhook event) now carry it, as distributing by merchant needs.
-- (SQLite adds a NOT NULL column only with a default; payd always sets it.)
ALTER TABLE access_tokens ADD COLUMN merchant_id TEXT NOT NULL DEFAULT '';
UPDATE access_tokens SET merchant_id = (SELECT a.merchant_id FROM apps a WHERE a.app_id = access_tokens.app_id);

ALTER TABLE postings ADD COLUMN merchant_id TEXT NOT NULL DEFAULT '';
UPDATE postings SET merchant_id = (SELECT e.merchant_id FROM journal_entries e WHERE e.id = postings.entry_id);

ALTER TABLE webhook_attempts ADD COLUMN merchant_id TEXT NOT NULL DEFAULT '';
UPDATE webhook_attempts SET merchant_id = (SELECT e.merchant_id FROM webhook_events e WHERE e.id = webhook_attempts.event_id);
