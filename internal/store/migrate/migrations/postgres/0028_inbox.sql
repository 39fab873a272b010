-- What comes back from the bank (CONTRACT §17, §18, §25): the files read
-- from the inboxes of the rails (pain.002 status reports) and, later, of
-- the bank feeds (statements), each applied once, and the exceptions left
-- for the operator. All are operator records: they belong to no merchant,
-- have no merchant_id, and on Citus stay on the coordinator
-- (store/migrate's citus.go).

-- An inbox file, known by its SHA-256: the same bytes again, under any
-- name, are that file (applied once). source_kind and source name the
-- rail or feed whose inbox held it, name what it was called there when
-- first read. A file is decided whole before anything of it is applied:
-- refused, it is rejected with the reason; taken, it is applying while its
-- entries are applied one by one (inbox_entries), then applied. entries
-- counts what it holds to apply (a pain.002's transfers with a status that
-- decides them, a statement's booked entries), applied those that changed
-- something, exceptions those left for the operator, unknown the
-- references that name nothing of payd's.
CREATE TABLE inbox_files (
    sha256      TEXT PRIMARY KEY,
    source_kind TEXT NOT NULL,
    source      TEXT NOT NULL,
    name        TEXT NOT NULL,
    format      TEXT NOT NULL DEFAULT '',
    document    TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL,
    entries     INTEGER NOT NULL DEFAULT 0,
    applied     INTEGER NOT NULL DEFAULT 0,
    exceptions  INTEGER NOT NULL DEFAULT 0,
    unknown     INTEGER NOT NULL DEFAULT 0,
    reason      TEXT NOT NULL DEFAULT '',
    received_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE INDEX inbox_files_source ON inbox_files (source_kind, source, received_at);

-- The entries of an inbox file applied so far, each once by its key (a
-- pain.002's transfer by its bank reference), each in the short
-- transaction that applied it: a restart resumes the file after them.
CREATE TABLE inbox_entries (
    sha256     TEXT NOT NULL,
    entry_key  TEXT NOT NULL,
    effect     TEXT NOT NULL,
    applied_at BIGINT NOT NULL,
    PRIMARY KEY (sha256, entry_key)
);

-- What the bank said that payd would not apply by itself, for the
-- operator (CONTRACT §25's shape: payd feed exceptions --json). A rail's
-- exception (state_mismatch) is about a transfer: it has its source,
-- currency, amount, entry_key (the bank reference), kind, status and
-- reason, and null for what describes a booked entry (direction, dates,
-- remittance, counterparty), which a feed's exception has.
CREATE TABLE bank_exceptions (
    id                   BIGSERIAL PRIMARY KEY,
    source_kind          TEXT NOT NULL,
    source               TEXT NOT NULL,
    currency             TEXT,
    direction            TEXT,
    amount               BIGINT,
    booking_date         TEXT,
    value_date           TEXT,
    entry_key            TEXT,
    remittance           TEXT,
    counterparty_name    TEXT,
    counterparty_account TEXT,
    kind                 TEXT NOT NULL,
    status               TEXT NOT NULL,
    resolved_by          TEXT,
    resolved_at          BIGINT,
    reason               TEXT NOT NULL,
    inbox_sha256         TEXT,
    created_at           BIGINT NOT NULL
);
CREATE INDEX bank_exceptions_open ON bank_exceptions (entry_key) WHERE status = 'open';
-- payd: distribute
-- (Nothing of the above is distributed: only the keys follow.)
ALTER TABLE inbox_entries ADD CONSTRAINT inbox_entries_file FOREIGN KEY (sha256) REFERENCES inbox_files (sha256);
