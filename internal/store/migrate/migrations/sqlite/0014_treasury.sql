-- Treasury accounts and transfers (CONTRACT §12, §15). A treasury account is
-- an account of kind 'treasury' (its ledger buckets opened with it); its
-- public id is public_id, and its status is active, in_review (USD, until
-- review approves a submission; its account number is not shown yet) or
-- rejected. Every review submission is kept.
ALTER TABLE accounts ADD COLUMN public_id TEXT;
UPDATE accounts SET public_id = account_number WHERE kind = 'treasury';
CREATE UNIQUE INDEX accounts_public_id ON accounts (public_id);

CREATE TABLE treasury_submissions (
    id               TEXT PRIMARY KEY,
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    account_id       BIGINT NOT NULL REFERENCES accounts(id),
    -- seq numbers an account's submissions in the order they were made.
    seq              INTEGER NOT NULL,
    status           TEXT NOT NULL,
    business_name    TEXT NOT NULL,
    business_number  TEXT NOT NULL,
    address          TEXT NOT NULL,
    country          TEXT NOT NULL,
    contact_name     TEXT NOT NULL,
    contact_email    TEXT NOT NULL,
    reason           TEXT,
    submitted_at     BIGINT NOT NULL,
    reviewed_at      BIGINT,
    UNIQUE (account_id, seq)
);

-- A transfer's uuid is the Balance ID of the record it writes on the
-- account the money leaves.
CREATE TABLE transfers (
    uuid                  TEXT PRIMARY KEY REFERENCES balance_records(id),
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    currency              TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    description           TEXT NOT NULL,
    from_account_id       BIGINT NOT NULL REFERENCES accounts(id),
    to_account_id         BIGINT REFERENCES accounts(id),
    bank_account          TEXT NOT NULL,
    status                TEXT NOT NULL,
    failure_reason        TEXT,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    completed_at          BIGINT
);
CREATE INDEX transfers_merchant ON transfers (merchant_id, created_at);
