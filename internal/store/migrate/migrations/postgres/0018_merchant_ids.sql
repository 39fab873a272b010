-- Every merchant-owned row names its merchant (DESIGN.md, "Storage"): the
-- three tables that reached theirs through another table (an app, a journal
-- entry, a webhook event) now carry it, as distributing by merchant needs.
ALTER TABLE access_tokens ADD COLUMN merchant_id TEXT;
UPDATE access_tokens t SET merchant_id = a.merchant_id FROM apps a WHERE a.app_id = t.app_id;
ALTER TABLE access_tokens ALTER COLUMN merchant_id SET NOT NULL;

ALTER TABLE postings ADD COLUMN merchant_id TEXT;
UPDATE postings p SET merchant_id = e.merchant_id FROM journal_entries e WHERE e.id = p.entry_id;
ALTER TABLE postings ALTER COLUMN merchant_id SET NOT NULL;

ALTER TABLE webhook_attempts ADD COLUMN merchant_id TEXT;
UPDATE webhook_attempts w SET merchant_id = e.merchant_id FROM webhook_events e WHERE e.id = w.event_id;
ALTER TABLE webhook_attempts ALTER COLUMN merchant_id SET NOT NULL;
