-- Settlement reports (CONTRACT §12): one CSV per payments account, frequency
-- (daily, monthly) and period, made once at 09:00 local time. A report's
-- bytes are written once with their SHA-256 and never change: the table
-- refuses UPDATE and DELETE. The unique period makes a second making of the
-- same period (another process, a retried job) a no-op.
CREATE TABLE reports (
    merchant_id       TEXT NOT NULL REFERENCES merchants(id),
    id                TEXT NOT NULL,
    account_id        BIGINT NOT NULL REFERENCES accounts(id),
    currency          TEXT NOT NULL,
    frequency         TEXT NOT NULL,
    period_start      BIGINT NOT NULL,
    period_end        BIGINT NOT NULL,
    file_name         TEXT NOT NULL,
    content_type      TEXT NOT NULL,
    content           BLOB NOT NULL,
    sha256            TEXT NOT NULL,
    settlement_count  BIGINT NOT NULL,
    settled_amount    BIGINT NOT NULL,
    settled_fee       BIGINT NOT NULL,
    closing_balance   BIGINT NOT NULL,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (merchant_id, account_id, frequency, period_start)
);
CREATE INDEX reports_list ON reports (merchant_id, account_id, period_end, id);

-- A report reads the postings of its period and those made since its
-- start (its opening balance is the bucket's balance less those): by time.
CREATE INDEX journal_entries_time ON journal_entries (merchant_id, created_at);

CREATE TRIGGER reports_no_update BEFORE UPDATE ON reports BEGIN SELECT RAISE(ABORT, 'reports are immutable'); END;
CREATE TRIGGER reports_no_delete BEFORE DELETE ON reports BEGIN SELECT RAISE(ABORT, 'reports are immutable'); END;

-- Keys that sign reports' file links, shared by every process. The newest
-- key without retired_at signs; a retired key still verifies the links it
-- signed until they expire. payd report rotate-key adds one.
CREATE TABLE report_signing_keys (
    id          TEXT PRIMARY KEY,
    secret      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    retired_at  BIGINT
);
