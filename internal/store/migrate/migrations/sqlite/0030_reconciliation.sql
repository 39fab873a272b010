-- Merchant reconciliation (CONTRACT §19, §25): the statements a merchant
-- uploads of the bank account payd settles into, and each statement's
-- credits (its lines), matched to the settlements and external transfers
-- payd sent there. Both are the merchant's rows, keyed by merchant_id (the
-- PostgreSQL migration says more).

CREATE TABLE reconciliation_statements (
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
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
    PRIMARY KEY (merchant_id, id),
    UNIQUE (merchant_id, sha256)
);
CREATE INDEX reconciliation_statements_list ON reconciliation_statements (merchant_id, created_at);

CREATE TABLE reconciliation_lines (
    merchant_id  TEXT NOT NULL REFERENCES merchants (id),
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
    PRIMARY KEY (merchant_id, id),
    UNIQUE (merchant_id, statement_id, seq),
    FOREIGN KEY (merchant_id, statement_id) REFERENCES reconciliation_statements (merchant_id, id)
);
CREATE UNIQUE INDEX reconciliation_lines_matched ON reconciliation_lines (merchant_id, matched_type, matched_uuid) WHERE matched_uuid IS NOT NULL;
