-- Payouts (v2, and v1 through the same engine): a batch and its transactions.
CREATE TABLE payouts (
    id                    INTEGER PRIMARY KEY,
    uuid                  TEXT NOT NULL UNIQUE,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    account_id            BIGINT NOT NULL REFERENCES accounts(id),
    api_version           TEXT NOT NULL,
    method                TEXT NOT NULL,
    currency              TEXT NOT NULL,
    description           TEXT NOT NULL,
    status                TEXT NOT NULL,
    total_amount          BIGINT NOT NULL,
    total_fees            BIGINT NOT NULL,
    scheduled_at          BIGINT,
    external_id           TEXT NOT NULL,
    is_retry              INTEGER NOT NULL DEFAULT 0,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    created_by            TEXT NOT NULL,
    created_by_user       TEXT NOT NULL DEFAULT '',
    approval_status       TEXT NOT NULL DEFAULT '',
    decided_by            TEXT NOT NULL DEFAULT '',
    decided_at            BIGINT,
    rejection_reason      TEXT NOT NULL DEFAULT '',
    hold_until            BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX payouts_list ON payouts (merchant_id, created_at);
CREATE INDEX payouts_external ON payouts (merchant_id, external_id);

CREATE TABLE payout_transactions (
    uuid            TEXT PRIMARY KEY,
    payout_id       BIGINT NOT NULL REFERENCES payouts(id),
    merchant_id     TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    first_name      TEXT NOT NULL,
    last_name       TEXT NOT NULL,
    email           TEXT NOT NULL,
    external_id     TEXT,
    amount          BIGINT NOT NULL,
    fee             BIGINT NOT NULL,
    params          TEXT NOT NULL,
    status          TEXT NOT NULL,
    failure_reason  TEXT NOT NULL DEFAULT '',
    balance_id      TEXT NOT NULL REFERENCES balance_records(id),
    submitted_at    BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX payout_transactions_order ON payout_transactions (payout_id, seq);

-- What the sandbox network was handed: one row per transfer key, counting repeats.
CREATE TABLE rail_submissions (
    key          TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL,
    rail         TEXT NOT NULL,
    method       TEXT NOT NULL,
    currency     TEXT NOT NULL,
    amount       BIGINT NOT NULL,
    params       TEXT NOT NULL,
    attempts     INTEGER NOT NULL,
    created_at   BIGINT NOT NULL
);

-- How long a held payout waits for a decision before it expires (7 days).
ALTER TABLE accounts ADD COLUMN approval_hold_ms BIGINT NOT NULL DEFAULT 604800000;
