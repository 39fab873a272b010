-- Instants are BIGINT unix milliseconds on both databases, so the same SQL
-- text and the same Go code serve SQLite and PostgreSQL. Money is BIGINT minor units.

CREATE TABLE merchants (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    country          TEXT NOT NULL,
    timezone         TEXT NOT NULL,
    webhook_secret   TEXT NOT NULL,
    clock_offset_ms  BIGINT NOT NULL DEFAULT 0,
    created_at       BIGINT NOT NULL
);

CREATE TABLE accounts (
    id              INTEGER PRIMARY KEY,
    merchant_id     TEXT NOT NULL REFERENCES merchants(id),
    kind            TEXT NOT NULL,
    currency        TEXT NOT NULL,
    account_number  TEXT NOT NULL UNIQUE,
    account_type    TEXT NOT NULL DEFAULT 'aggregated',
    status          TEXT NOT NULL DEFAULT 'active',
    methods         TEXT,
    approvals       INTEGER NOT NULL DEFAULT 0,
    reserve_bps     INTEGER NOT NULL DEFAULT 0,
    reserve_days    INTEGER NOT NULL DEFAULT 0,
    min_balance     BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    UNIQUE (merchant_id, kind, currency)
);

CREATE TABLE apps (
    app_id       TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    account_id   BIGINT NOT NULL REFERENCES accounts(id),
    secret_hash  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX apps_merchant ON apps (merchant_id);

CREATE TABLE access_tokens (
    token_hash  TEXT PRIMARY KEY,
    app_id      TEXT NOT NULL REFERENCES apps(app_id),
    expires_at  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX access_tokens_expiry ON access_tokens (expires_at);

CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    merchant_id    TEXT NOT NULL REFERENCES merchants(id),
    email          TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    created_at     BIGINT NOT NULL
);

-- Ledger: one row per (account, bucket) holding the running balance, updated
-- in the same transaction that appends the postings it sums; journal entries
-- and postings are append-only. payd ledger verify checks the two agree.
CREATE TABLE ledger_buckets (
    id              INTEGER PRIMARY KEY,
    merchant_id     TEXT NOT NULL,
    account_id      BIGINT NOT NULL REFERENCES accounts(id),
    name            TEXT NOT NULL,
    currency        TEXT NOT NULL,
    balance         BIGINT NOT NULL DEFAULT 0,
    allow_negative  INTEGER NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE balance_records (
    id                TEXT PRIMARY KEY,
    merchant_id       TEXT NOT NULL,
    account_id        BIGINT NOT NULL REFERENCES accounts(id),
    currency          TEXT NOT NULL,
    request_type      TEXT NOT NULL,
    transaction_type  TEXT NOT NULL,
    status            TEXT NOT NULL,
    amount            BIGINT NOT NULL,
    fees              BIGINT NOT NULL,
    outgoing          BIGINT NOT NULL,
    total             BIGINT NOT NULL,
    reference_id      TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX balance_records_history ON balance_records (account_id, created_at, id);
CREATE INDEX balance_records_reference ON balance_records (merchant_id, reference_id);

CREATE TABLE journal_entries (
    id                 INTEGER PRIMARY KEY,
    merchant_id        TEXT NOT NULL,
    balance_record_id  TEXT REFERENCES balance_records(id),
    kind               TEXT NOT NULL,
    created_at         BIGINT NOT NULL
);
CREATE INDEX journal_entries_record ON journal_entries (balance_record_id);

CREATE TABLE postings (
    id             INTEGER PRIMARY KEY,
    entry_id       BIGINT NOT NULL REFERENCES journal_entries(id),
    bucket_id      BIGINT NOT NULL REFERENCES ledger_buckets(id),
    currency       TEXT NOT NULL,
    amount         BIGINT NOT NULL,
    balance_after  BIGINT NOT NULL
);
CREATE INDEX postings_bucket ON postings (bucket_id, id);
CREATE INDEX postings_entry ON postings (entry_id);

CREATE TABLE idempotency_keys (
    merchant_id   TEXT NOT NULL,
    key           TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    status_code   INTEGER NOT NULL,
    body          BLOB NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);

-- Jobs: a durable queue in the same database, so work is enqueued in the
-- transaction that makes it necessary. run_at is read on the clock of the
-- merchant named by clock_of (its sandbox test clock), or on the real clock when NULL.
CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL,
    clock_of      TEXT REFERENCES merchants(id),
    payload       TEXT NOT NULL,
    run_at        BIGINT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    state         TEXT NOT NULL,
    locked_until  BIGINT,
    last_error    TEXT,
    unique_key    TEXT UNIQUE,
    created_at    BIGINT NOT NULL
);
CREATE INDEX jobs_due ON jobs (state, run_at);
CREATE INDEX jobs_clock ON jobs (clock_of, state, run_at);

-- Inbound bank transfers credited to an account (the sandbox simulates them).
CREATE TABLE deposits (
    uuid                  TEXT PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    account_id            BIGINT NOT NULL REFERENCES accounts(id),
    balance_id            TEXT NOT NULL REFERENCES balance_records(id),
    currency              TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    remitter_name         TEXT NOT NULL,
    remitter_bank_name    TEXT NOT NULL,
    remitter_branch_name  TEXT NOT NULL,
    remarks               TEXT NOT NULL,
    status                TEXT NOT NULL,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX deposits_merchant ON deposits (merchant_id, created_at);
