-- Settlements (CONTRACT §12, §15): how a payments account's money goes to
-- the merchant's own bank account or treasury account. The config is one
-- row per account; a settlement keeps the beneficiary it was submitted with.
CREATE TABLE settlement_configs (
    account_id            BIGINT PRIMARY KEY REFERENCES accounts(id),
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    currency              TEXT NOT NULL,
    frequency             TEXT NOT NULL,
    treasury_account_id   BIGINT REFERENCES accounts(id),
    bank_account          TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    updated_at            BIGINT NOT NULL
);

CREATE TABLE settlements (
    uuid                 TEXT PRIMARY KEY,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL REFERENCES accounts(id),
    currency             TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    fee                  BIGINT NOT NULL,
    status               TEXT NOT NULL,
    frequency            TEXT NOT NULL,
    beneficiary          TEXT NOT NULL,
    treasury_account_id  BIGINT REFERENCES accounts(id),
    balance_id           TEXT NOT NULL REFERENCES balance_records(id),
    eod_date             TEXT,
    failure_reason       TEXT,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    completed_at         BIGINT,
    updated_at           BIGINT NOT NULL,
    UNIQUE (account_id, eod_date)
);
CREATE INDEX settlements_list ON settlements (merchant_id, created_at);
