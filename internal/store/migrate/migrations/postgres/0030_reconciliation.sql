-- Merchant reconciliation (CONTRACT §19, §25): the statements a merchant
-- uploads of the bank account payd settles into, and each statement's
-- credits (its lines), matched to the settlements and external transfers
-- payd sent there. Both are the merchant's rows: keyed by merchant_id, and
-- on Citus distributed by it (created without foreign keys, distributed at
-- the marker, then the keys).

-- A statement, known within its merchant by the SHA-256 of its bytes: the
-- same file again is this statement (CONTRACT §19: the same id, nothing
-- added). from_date and to_date are the period it reports (YYYY-MM-DD),
-- opening and closing the balances it states (null when it states none, a
-- CSV), entries every entry it holds (debits included), credits its lines.
CREATE TABLE reconciliation_statements (
    merchant_id     TEXT NOT NULL,
    id              TEXT NOT NULL,
    sha256          TEXT NOT NULL,
    format          TEXT NOT NULL,
    account_number  TEXT NOT NULL,
    currency        TEXT NOT NULL,
    from_date       TEXT NOT NULL,
    to_date         TEXT NOT NULL,
    opening_balance BIGINT,
    closing_balance BIGINT,
    entries         INTEGER NOT NULL,
    credits         INTEGER NOT NULL,
    uploaded_by     TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    CONSTRAINT reconciliation_statements_key PRIMARY KEY (merchant_id, id),
    CONSTRAINT reconciliation_statements_sha256 UNIQUE (merchant_id, sha256)
);
CREATE INDEX reconciliation_statements_list ON reconciliation_statements (merchant_id, created_at);

-- A booked credit of a statement, in file order (seq), and what explains
-- it: matched (matched_type settlement or transfer, matched_uuid), unmatched
-- or ignored (with the reason). A record of payd's is matched by one line
-- at most, across every statement of the merchant.
CREATE TABLE reconciliation_lines (
    merchant_id  TEXT NOT NULL,
    id           TEXT NOT NULL,
    statement_id TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    value_date   TEXT NOT NULL,
    amount       BIGINT NOT NULL,
    reference    TEXT NOT NULL,
    description  TEXT NOT NULL,
    status       TEXT NOT NULL,
    matched_type TEXT,
    matched_uuid TEXT,
    reason       TEXT NOT NULL DEFAULT '',
    updated_at   BIGINT NOT NULL,
    CONSTRAINT reconciliation_lines_key PRIMARY KEY (merchant_id, id),
    CONSTRAINT reconciliation_lines_seq UNIQUE (merchant_id, statement_id, seq)
);
CREATE UNIQUE INDEX reconciliation_lines_matched ON reconciliation_lines (merchant_id, matched_type, matched_uuid) WHERE matched_uuid IS NOT NULL;
-- payd: distribute
ALTER TABLE reconciliation_statements ADD CONSTRAINT reconciliation_statements_merchant FOREIGN KEY (merchant_id) REFERENCES merchants (id);
ALTER TABLE reconciliation_lines ADD CONSTRAINT reconciliation_lines_merchant FOREIGN KEY (merchant_id) REFERENCES merchants (id);
ALTER TABLE reconciliation_lines ADD CONSTRAINT reconciliation_lines_statement
    FOREIGN KEY (merchant_id, statement_id) REFERENCES reconciliation_statements (merchant_id, id);
