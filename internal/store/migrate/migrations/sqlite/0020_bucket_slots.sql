-- Hot buckets (internal/ledger, Entry.Spread) are split into slots on
-- PostgreSQL. SQLite has one writer, so there is nothing to spread: every
-- bucket is its slot 0, and the column keeps the two schemas alike.
ALTER TABLE ledger_buckets ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;
