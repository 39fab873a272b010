-- Bank feeds (CONTRACT §18, §25): the operator's collection and treasury
-- accounts at its banks, whose statements and notifications payd reads
-- from each feed's inbox. Feeds and their entries are operator records:
-- they belong to no merchant (a feed entry finds its merchant through what
-- it matches), have no merchant_id, and on Citus stay on the coordinator
-- (store/migrate's citus.go), as the inbox files and exceptions of
-- migration 0028 do. The files themselves are inbox_files (source_kind
-- 'feed'), their exceptions bank_exceptions.

-- A feed: its account (as the operator gave it, and its digits, which a
-- file's account is compared with), currency and inbox. A feed is never
-- deleted (its entries name it): unset marks it, and its inbox is read no
-- more.
CREATE TABLE feeds (
    name             TEXT PRIMARY KEY,
    currency         TEXT NOT NULL,
    account          TEXT NOT NULL,
    account_digits   TEXT NOT NULL,
    bsb              TEXT NOT NULL DEFAULT '',
    bic              TEXT NOT NULL DEFAULT '',
    inbox            TEXT NOT NULL,
    sftp_key         TEXT NOT NULL DEFAULT '',
    sftp_known_hosts TEXT NOT NULL DEFAULT '',
    unset_at         BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
-- No two feeds share an inbox (CONTRACT §25; rails' inboxes are checked by
-- payd feed set).
CREATE UNIQUE INDEX feeds_inbox ON feeds (inbox) WHERE unset_at IS NULL;

-- Each booked entry applied, once by its key within its account (CONTRACT
-- §18): account is the account's digits and currency ("12345678 AUD"), so
-- that the same entry in a camt.054 and later in the camt.053, or in a
-- file imported twice, under any feed of that account, is applied once.
-- effect says what it did (a payin received, a PayID paid, a deposit, a
-- transfer's outcome, an exception), record_type, record_owner and
-- record_id the record it moved (record_owner is the merchant, named so
-- that Citus leaves the table on the coordinator), exception_id the
-- exception it opened.
CREATE TABLE feed_entries (
    account      TEXT NOT NULL,
    entry_key    TEXT NOT NULL,
    feed         TEXT NOT NULL REFERENCES feeds (name),
    sha256       TEXT NOT NULL,
    direction    TEXT NOT NULL,
    amount       BIGINT NOT NULL,
    currency     TEXT NOT NULL,
    effect       TEXT NOT NULL,
    record_type  TEXT NOT NULL DEFAULT '',
    record_owner TEXT NOT NULL DEFAULT '',
    record_id    TEXT NOT NULL DEFAULT '',
    exception_id BIGINT,
    applied_at   BIGINT NOT NULL,
    PRIMARY KEY (account, entry_key)
);
CREATE INDEX feed_entries_file ON feed_entries (sha256);

-- The records a feed entry moved carry the entry's key (CONTRACT §18, §25:
-- only payins, PayID payments and deposits take it; a transfer of §17 keeps
-- its own).
ALTER TABLE payins ADD COLUMN bank_reference TEXT;
ALTER TABLE payment_requests ADD COLUMN bank_reference TEXT;
ALTER TABLE static_payid_payments ADD COLUMN bank_reference TEXT;
ALTER TABLE deposits ADD COLUMN bank_reference TEXT;
