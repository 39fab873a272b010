-- Every merchant-owned table is keyed by merchant (DESIGN.md, "Storage"; issue
-- 19), as on PostgreSQL (its 0021 says why): primary keys and unique
-- constraints lead with merchant_id and foreign keys between merchant-owned
-- tables include it. SQLite changes a key only by rebuilding the table, so
-- each table is copied into a new one with the new keys, the old ones are
-- dropped (children first) and the new ones take their names; indexes and
-- triggers are made again. Integer ids stay the rowid (INTEGER PRIMARY KEY:
-- SQLite numbers them only so), with a UNIQUE (merchant_id, id) beside them
-- where another table's foreign key points at them.
--
-- Foreign keys are checked at the commit (defer_foreign_keys lasts until
-- then), once every table is back in place.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE accounts__new (
    id               INTEGER PRIMARY KEY,
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    kind             TEXT NOT NULL,
    currency         TEXT NOT NULL,
    account_number   TEXT NOT NULL,
    account_type     TEXT NOT NULL DEFAULT 'aggregated',
    status           TEXT NOT NULL DEFAULT 'active',
    methods          TEXT,
    approvals        INTEGER NOT NULL DEFAULT 0,
    reserve_bps      INTEGER NOT NULL DEFAULT 0,
    reserve_days     INTEGER NOT NULL DEFAULT 0,
    min_balance      BIGINT NOT NULL DEFAULT 0,
    created_at       BIGINT NOT NULL,
    approval_hold_ms BIGINT NOT NULL DEFAULT 604800000,
    public_id        TEXT,
    UNIQUE (merchant_id, id),
    UNIQUE (merchant_id, kind, currency)
);
INSERT INTO accounts__new (id, merchant_id, kind, currency, account_number, account_type, status, methods, approvals, reserve_bps, reserve_days, min_balance, created_at, approval_hold_ms, public_id) SELECT id, merchant_id, kind, currency, account_number, account_type, status, methods, approvals, reserve_bps, reserve_days, min_balance, created_at, approval_hold_ms, public_id FROM accounts;

CREATE TABLE apps__new (
    app_id      TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    account_id  BIGINT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT,
    PRIMARY KEY (merchant_id, app_id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id)
);
INSERT INTO apps__new (app_id, merchant_id, account_id, secret_hash, created_at, revoked_at) SELECT app_id, merchant_id, account_id, secret_hash, created_at, revoked_at FROM apps;

CREATE TABLE access_tokens__new (
    token_hash  TEXT NOT NULL,
    app_id      TEXT NOT NULL,
    expires_at  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    merchant_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (merchant_id, token_hash),
    FOREIGN KEY (merchant_id, app_id) REFERENCES apps__new (merchant_id, app_id)
);
INSERT INTO access_tokens__new (token_hash, app_id, expires_at, created_at, merchant_id) SELECT token_hash, app_id, expires_at, created_at, merchant_id FROM access_tokens;

CREATE TABLE users__new (
    id             TEXT NOT NULL,
    merchant_id    TEXT NOT NULL REFERENCES merchants(id),
    email          TEXT NOT NULL,
    role           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    disabled_at    BIGINT,
    totp_secret    TEXT NOT NULL DEFAULT '',
    totp_pending   TEXT NOT NULL DEFAULT '',
    totp_last_step BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, id)
);
INSERT INTO users__new (id, merchant_id, email, role, password_hash, created_at, disabled_at, totp_secret, totp_pending, totp_last_step) SELECT id, merchant_id, email, role, password_hash, created_at, disabled_at, totp_secret, totp_pending, totp_last_step FROM users;

CREATE TABLE ledger_buckets__new (
    id             INTEGER PRIMARY KEY,
    merchant_id    TEXT NOT NULL,
    account_id     BIGINT NOT NULL,
    name           TEXT NOT NULL,
    currency       TEXT NOT NULL,
    balance        BIGINT NOT NULL DEFAULT 0,
    allow_negative INTEGER NOT NULL,
    slot           INTEGER NOT NULL DEFAULT 0,
    UNIQUE (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    UNIQUE (merchant_id, account_id, name, slot)
);
INSERT INTO ledger_buckets__new (id, merchant_id, account_id, name, currency, balance, allow_negative, slot) SELECT id, merchant_id, account_id, name, currency, balance, allow_negative, slot FROM ledger_buckets;

CREATE TABLE balance_records__new (
    id               TEXT NOT NULL,
    merchant_id      TEXT NOT NULL,
    account_id       BIGINT NOT NULL,
    currency         TEXT NOT NULL,
    request_type     TEXT NOT NULL,
    transaction_type TEXT NOT NULL,
    status           TEXT NOT NULL,
    amount           BIGINT NOT NULL,
    fees             BIGINT NOT NULL,
    outgoing         BIGINT NOT NULL,
    total            BIGINT NOT NULL,
    reference_id     TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id)
);
INSERT INTO balance_records__new (id, merchant_id, account_id, currency, request_type, transaction_type, status, amount, fees, outgoing, total, reference_id, created_at, updated_at) SELECT id, merchant_id, account_id, currency, request_type, transaction_type, status, amount, fees, outgoing, total, reference_id, created_at, updated_at FROM balance_records;

CREATE TABLE journal_entries__new (
    id                INTEGER PRIMARY KEY,
    merchant_id       TEXT NOT NULL,
    balance_record_id TEXT,
    kind              TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    UNIQUE (merchant_id, id),
    FOREIGN KEY (merchant_id, balance_record_id) REFERENCES balance_records__new (merchant_id, id)
);
INSERT INTO journal_entries__new (id, merchant_id, balance_record_id, kind, created_at) SELECT id, merchant_id, balance_record_id, kind, created_at FROM journal_entries;

CREATE TABLE postings__new (
    id            INTEGER PRIMARY KEY,
    entry_id      BIGINT NOT NULL,
    bucket_id     BIGINT NOT NULL,
    currency      TEXT NOT NULL,
    amount        BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    overdraft     INTEGER NOT NULL DEFAULT 0,
    merchant_id   TEXT NOT NULL DEFAULT '',
    FOREIGN KEY (merchant_id, entry_id) REFERENCES journal_entries__new (merchant_id, id),
    FOREIGN KEY (merchant_id, bucket_id) REFERENCES ledger_buckets__new (merchant_id, id)
);
INSERT INTO postings__new (id, entry_id, bucket_id, currency, amount, balance_after, overdraft, merchant_id) SELECT id, entry_id, bucket_id, currency, amount, balance_after, overdraft, merchant_id FROM postings;

CREATE TABLE deposits__new (
    uuid                 TEXT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    balance_id           TEXT NOT NULL,
    currency             TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    remitter_name        TEXT NOT NULL,
    remitter_bank_name   TEXT NOT NULL,
    remitter_branch_name TEXT NOT NULL,
    remarks              TEXT NOT NULL,
    status               TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, uuid),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records__new (merchant_id, id)
);
INSERT INTO deposits__new (uuid, merchant_id, account_id, balance_id, currency, amount, remitter_name, remitter_bank_name, remitter_branch_name, remarks, status, created_at, updated_at) SELECT uuid, merchant_id, account_id, balance_id, currency, amount, remitter_name, remitter_bank_name, remitter_branch_name, remarks, status, created_at, updated_at FROM deposits;

CREATE TABLE webhook_events__new (
    id                   TEXT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    event_type           TEXT NOT NULL,
    record_uuid          TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    body                 BLOB NOT NULL,
    status               TEXT NOT NULL,
    attempts             INTEGER NOT NULL DEFAULT 0,
    next_attempt_at      BIGINT,
    locked_until         BIGINT,
    last_error           TEXT,
    created_at           BIGINT NOT NULL,
    delivered_at         BIGINT,
    updated_at           BIGINT NOT NULL,
    seq                  INTEGER,
    PRIMARY KEY (merchant_id, id)
);
INSERT INTO webhook_events__new (id, merchant_id, event_type, record_uuid, endpoint_url, authorization_header, body, status, attempts, next_attempt_at, locked_until, last_error, created_at, delivered_at, updated_at, seq) SELECT id, merchant_id, event_type, record_uuid, endpoint_url, authorization_header, body, status, attempts, next_attempt_at, locked_until, last_error, created_at, delivered_at, updated_at, seq FROM webhook_events;

CREATE TABLE webhook_attempts__new (
    id          INTEGER PRIMARY KEY,
    event_id    TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    started_at  BIGINT NOT NULL,
    status_code INTEGER,
    latency_ms  BIGINT NOT NULL,
    error       TEXT,
    merchant_id TEXT NOT NULL DEFAULT '',
    FOREIGN KEY (merchant_id, event_id) REFERENCES webhook_events__new (merchant_id, id)
);
INSERT INTO webhook_attempts__new (id, event_id, attempt, started_at, status_code, latency_ms, error, merchant_id) SELECT id, event_id, attempt, started_at, status_code, latency_ms, error, merchant_id FROM webhook_attempts;

CREATE TABLE payins__new (
    uuid                 TEXT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    method               TEXT NOT NULL,
    currency             TEXT NOT NULL,
    status               TEXT NOT NULL,
    stage                TEXT NOT NULL DEFAULT '',
    amount               BIGINT NOT NULL,
    gst                  INTEGER NOT NULL,
    gst_amount           BIGINT NOT NULL,
    total                BIGINT NOT NULL,
    paid_amount          BIGINT NOT NULL DEFAULT 0,
    fee                  BIGINT NOT NULL DEFAULT 0,
    reserve              BIGINT NOT NULL DEFAULT 0,
    refunded             BIGINT NOT NULL DEFAULT 0,
    last_refund          BIGINT NOT NULL DEFAULT 0,
    refund_description   TEXT NOT NULL DEFAULT '',
    name                 TEXT NOT NULL,
    email                TEXT NOT NULL,
    external_id          TEXT NOT NULL,
    description          TEXT NOT NULL,
    params               TEXT NOT NULL,
    pay_code             TEXT NOT NULL,
    metadata             TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    otp_attempts         INTEGER NOT NULL DEFAULT 0,
    balance_id           TEXT,
    expired_at           BIGINT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, uuid),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id)
);
INSERT INTO payins__new (uuid, merchant_id, account_id, method, currency, status, stage, amount, gst, gst_amount, total, paid_amount, fee, reserve, refunded, last_refund, refund_description, name, email, external_id, description, params, pay_code, metadata, endpoint_url, authorization_header, otp_attempts, balance_id, expired_at, created_at, updated_at) SELECT uuid, merchant_id, account_id, method, currency, status, stage, amount, gst, gst_amount, total, paid_amount, fee, reserve, refunded, last_refund, refund_description, name, email, external_id, description, params, pay_code, metadata, endpoint_url, authorization_header, otp_attempts, balance_id, expired_at, created_at, updated_at FROM payins;

CREATE TABLE payin_refunds__new (
    uuid        TEXT NOT NULL,
    payin_uuid  TEXT NOT NULL,
    merchant_id TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    description TEXT NOT NULL,
    status      TEXT NOT NULL,
    balance_id  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, uuid),
    FOREIGN KEY (merchant_id, payin_uuid) REFERENCES payins__new (merchant_id, uuid),
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records__new (merchant_id, id)
);
INSERT INTO payin_refunds__new (uuid, payin_uuid, merchant_id, amount, description, status, balance_id, created_at, updated_at) SELECT uuid, payin_uuid, merchant_id, amount, description, status, balance_id, created_at, updated_at FROM payin_refunds;

CREATE TABLE contacts__new (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    email       TEXT NOT NULL,
    email_key   TEXT NOT NULL,
    first_name  TEXT NOT NULL,
    last_name   TEXT NOT NULL,
    type        TEXT NOT NULL,
    dob         TEXT NOT NULL,
    reg_no      TEXT NOT NULL,
    phone       TEXT NOT NULL,
    gender      TEXT NOT NULL,
    street      TEXT NOT NULL,
    city        TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    state       TEXT NOT NULL,
    country     TEXT NOT NULL,
    kyc_status  TEXT NOT NULL DEFAULT '',
    verified_at BIGINT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (merchant_id, id),
    UNIQUE (merchant_id, uuid),
    UNIQUE (merchant_id, email_key)
);
INSERT INTO contacts__new (id, uuid, merchant_id, email, email_key, first_name, last_name, type, dob, reg_no, phone, gender, street, city, postal_code, state, country, kyc_status, verified_at, created_at, updated_at) SELECT id, uuid, merchant_id, email, email_key, first_name, last_name, type, dob, reg_no, phone, gender, street, city, postal_code, state, country, kyc_status, verified_at, created_at, updated_at FROM contacts;

CREATE TABLE kyc_submissions__new (
    id                   INTEGER PRIMARY KEY,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    contact_id           BIGINT NOT NULL,
    document_type        TEXT NOT NULL,
    document_number      TEXT NOT NULL,
    issue_date           TEXT NOT NULL,
    expiry_date          TEXT NOT NULL,
    issue_country        TEXT NOT NULL,
    nationality          TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    status               TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    decided_at           BIGINT,
    UNIQUE (merchant_id, id),
    FOREIGN KEY (merchant_id, contact_id) REFERENCES contacts__new (merchant_id, id)
);
INSERT INTO kyc_submissions__new (id, merchant_id, contact_id, document_type, document_number, issue_date, expiry_date, issue_country, nationality, endpoint_url, authorization_header, status, created_at, decided_at) SELECT id, merchant_id, contact_id, document_type, document_number, issue_date, expiry_date, issue_country, nationality, endpoint_url, authorization_header, status, created_at, decided_at FROM kyc_submissions;

CREATE TABLE kyc_documents__new (
    id            INTEGER PRIMARY KEY,
    submission_id BIGINT NOT NULL,
    merchant_id   TEXT NOT NULL,
    part          TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    size_bytes    BIGINT NOT NULL,
    sha256        TEXT NOT NULL,
    content       BLOB NOT NULL,
    created_at    BIGINT NOT NULL,
    FOREIGN KEY (merchant_id, submission_id) REFERENCES kyc_submissions__new (merchant_id, id),
    UNIQUE (merchant_id, submission_id, part)
);
INSERT INTO kyc_documents__new (id, submission_id, merchant_id, part, content_type, size_bytes, sha256, content, created_at) SELECT id, submission_id, merchant_id, part, content_type, size_bytes, sha256, content, created_at FROM kyc_documents;

CREATE TABLE verification_tokens__new (
    token_hash  TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    contact_id  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    replaced_at BIGINT,
    used_at     BIGINT,
    PRIMARY KEY (merchant_id, token_hash),
    FOREIGN KEY (merchant_id, contact_id) REFERENCES contacts__new (merchant_id, id)
);
INSERT INTO verification_tokens__new (token_hash, merchant_id, contact_id, expires_at, created_at, replaced_at, used_at) SELECT token_hash, merchant_id, contact_id, expires_at, created_at, replaced_at, used_at FROM verification_tokens;

CREATE TABLE verification_messages__new (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    contact_id  BIGINT NOT NULL,
    channel     TEXT NOT NULL,
    recipient   TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    subject     TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'sent',
    sent_at     BIGINT,
    error       TEXT,
    UNIQUE (merchant_id, uuid),
    FOREIGN KEY (merchant_id, contact_id) REFERENCES contacts__new (merchant_id, id)
);
INSERT INTO verification_messages__new (id, uuid, merchant_id, contact_id, channel, recipient, body, created_at, subject, status, sent_at, error) SELECT id, uuid, merchant_id, contact_id, channel, recipient, body, created_at, subject, status, sent_at, error FROM verification_messages;

CREATE TABLE customers__new (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    first_name  TEXT NOT NULL,
    last_name   TEXT NOT NULL,
    email       TEXT NOT NULL,
    email_key   TEXT NOT NULL,
    phone       TEXT NOT NULL,
    external_id TEXT NOT NULL,
    street      TEXT NOT NULL,
    city        TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    state       TEXT NOT NULL,
    country     TEXT NOT NULL,
    metadata    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (merchant_id, uuid)
);
INSERT INTO customers__new (id, uuid, merchant_id, first_name, last_name, email, email_key, phone, external_id, street, city, postal_code, state, country, metadata, created_at, updated_at) SELECT id, uuid, merchant_id, first_name, last_name, email, email_key, phone, external_id, street, city, postal_code, state, country, metadata, created_at, updated_at FROM customers;

CREATE TABLE payouts__new (
    id                   INTEGER PRIMARY KEY,
    uuid                 TEXT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    api_version          TEXT NOT NULL,
    method               TEXT NOT NULL,
    currency             TEXT NOT NULL,
    description          TEXT NOT NULL,
    status               TEXT NOT NULL,
    total_amount         BIGINT NOT NULL,
    total_fees           BIGINT NOT NULL,
    scheduled_at         BIGINT,
    external_id          TEXT NOT NULL,
    is_retry             INTEGER NOT NULL DEFAULT 0,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    created_by           TEXT NOT NULL,
    created_by_user      TEXT NOT NULL DEFAULT '',
    approval_status      TEXT NOT NULL DEFAULT '',
    decided_by           TEXT NOT NULL DEFAULT '',
    decided_at           BIGINT,
    rejection_reason     TEXT NOT NULL DEFAULT '',
    hold_until           BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    UNIQUE (merchant_id, id),
    UNIQUE (merchant_id, uuid),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id)
);
INSERT INTO payouts__new (id, uuid, merchant_id, account_id, api_version, method, currency, description, status, total_amount, total_fees, scheduled_at, external_id, is_retry, endpoint_url, authorization_header, created_by, created_by_user, approval_status, decided_by, decided_at, rejection_reason, hold_until, created_at, updated_at) SELECT id, uuid, merchant_id, account_id, api_version, method, currency, description, status, total_amount, total_fees, scheduled_at, external_id, is_retry, endpoint_url, authorization_header, created_by, created_by_user, approval_status, decided_by, decided_at, rejection_reason, hold_until, created_at, updated_at FROM payouts;

CREATE TABLE payout_transactions__new (
    uuid           TEXT NOT NULL,
    payout_id      BIGINT NOT NULL,
    merchant_id    TEXT NOT NULL,
    seq            INTEGER NOT NULL,
    first_name     TEXT NOT NULL,
    last_name      TEXT NOT NULL,
    email          TEXT NOT NULL,
    external_id    TEXT,
    amount         BIGINT NOT NULL,
    fee            BIGINT NOT NULL,
    params         TEXT NOT NULL,
    status         TEXT NOT NULL,
    failure_reason TEXT NOT NULL DEFAULT '',
    balance_id     TEXT NOT NULL,
    submitted_at   BIGINT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, uuid),
    FOREIGN KEY (merchant_id, payout_id) REFERENCES payouts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records__new (merchant_id, id)
);
INSERT INTO payout_transactions__new (uuid, payout_id, merchant_id, seq, first_name, last_name, email, external_id, amount, fee, params, status, failure_reason, balance_id, submitted_at, created_at, updated_at) SELECT uuid, payout_id, merchant_id, seq, first_name, last_name, email, external_id, amount, fee, params, status, failure_reason, balance_id, submitted_at, created_at, updated_at FROM payout_transactions;

CREATE TABLE rail_submissions__new (
    key         TEXT NOT NULL,
    merchant_id TEXT NOT NULL,
    rail        TEXT NOT NULL,
    method      TEXT NOT NULL,
    currency    TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    params      TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, key)
);
INSERT INTO rail_submissions__new (key, merchant_id, rail, method, currency, amount, params, attempts, created_at) SELECT key, merchant_id, rail, method, currency, amount, params, attempts, created_at FROM rail_submissions;

CREATE TABLE payids__new (
    payid           TEXT NOT NULL,
    merchant_id     TEXT NOT NULL REFERENCES merchants(id),
    kind            TEXT NOT NULL,
    ref_id          BIGINT NOT NULL,
    deregistered_at BIGINT,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, payid)
);
INSERT INTO payids__new (payid, merchant_id, kind, ref_id, deregistered_at, created_at) SELECT payid, merchant_id, kind, ref_id, deregistered_at, created_at FROM payids;

CREATE TABLE payment_requests__new (
    id                   INTEGER PRIMARY KEY,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    payid                TEXT NOT NULL,
    name                 TEXT NOT NULL,
    description          TEXT NOT NULL,
    external_id          TEXT NOT NULL,
    emails               TEXT NOT NULL,
    gst                  INTEGER NOT NULL,
    amount               BIGINT NOT NULL,
    gst_amount           BIGINT NOT NULL,
    total                BIGINT NOT NULL,
    fee                  BIGINT NOT NULL DEFAULT 0,
    status               TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    metadata             TEXT NOT NULL,
    expired_at           BIGINT NOT NULL,
    cancelled_at         BIGINT,
    paid_amount          BIGINT NOT NULL DEFAULT 0,
    payer_name           TEXT NOT NULL DEFAULT '',
    paid_at              BIGINT,
    balance_id           TEXT,
    return_balance_id    TEXT,
    return_reason        TEXT NOT NULL DEFAULT '',
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    UNIQUE (merchant_id, payid)
);
INSERT INTO payment_requests__new (id, merchant_id, account_id, payid, name, description, external_id, emails, gst, amount, gst_amount, total, fee, status, endpoint_url, authorization_header, metadata, expired_at, cancelled_at, paid_amount, payer_name, paid_at, balance_id, return_balance_id, return_reason, created_at, updated_at) SELECT id, merchant_id, account_id, payid, name, description, external_id, emails, gst, amount, gst_amount, total, fee, status, endpoint_url, authorization_header, metadata, expired_at, cancelled_at, paid_amount, payer_name, paid_at, balance_id, return_balance_id, return_reason, created_at, updated_at FROM payment_requests;

CREATE TABLE static_payids__new (
    id                   INTEGER PRIMARY KEY,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    payid                TEXT NOT NULL,
    customer_id          TEXT NOT NULL,
    name                 TEXT NOT NULL,
    email                TEXT NOT NULL,
    phone                TEXT NOT NULL,
    address              TEXT NOT NULL,
    city                 TEXT NOT NULL,
    state                TEXT NOT NULL,
    zip_code             TEXT NOT NULL,
    status               TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    UNIQUE (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    UNIQUE (merchant_id, payid),
    UNIQUE (merchant_id, customer_id)
);
INSERT INTO static_payids__new (id, merchant_id, account_id, payid, customer_id, name, email, phone, address, city, state, zip_code, status, endpoint_url, authorization_header, created_at) SELECT id, merchant_id, account_id, payid, customer_id, name, email, phone, address, city, state, zip_code, status, endpoint_url, authorization_header, created_at FROM static_payids;

CREATE TABLE static_payid_payments__new (
    id          INTEGER PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    static_id   BIGINT NOT NULL,
    amount      BIGINT NOT NULL,
    fee         BIGINT NOT NULL,
    payer_name  TEXT NOT NULL,
    balance_id  TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    FOREIGN KEY (merchant_id, static_id) REFERENCES static_payids__new (merchant_id, id)
);
INSERT INTO static_payid_payments__new (id, merchant_id, static_id, amount, fee, payer_name, balance_id, received_at) SELECT id, merchant_id, static_id, amount, fee, payer_name, balance_id, received_at FROM static_payid_payments;

CREATE TABLE portal_sessions__new (
    token_hash   TEXT NOT NULL,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    user_id      TEXT NOT NULL,
    csrf_token   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, token_hash),
    FOREIGN KEY (merchant_id, user_id) REFERENCES users__new (merchant_id, id)
);
INSERT INTO portal_sessions__new (token_hash, merchant_id, user_id, csrf_token, created_at, last_seen_at) SELECT token_hash, merchant_id, user_id, csrf_token, created_at, last_seen_at FROM portal_sessions;

CREATE TABLE portal_invites__new (
    token_hash  TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    user_id     TEXT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT,
    PRIMARY KEY (merchant_id, token_hash),
    FOREIGN KEY (merchant_id, user_id) REFERENCES users__new (merchant_id, id)
);
INSERT INTO portal_invites__new (token_hash, merchant_id, user_id, expires_at, used_at) SELECT token_hash, merchant_id, user_id, expires_at, used_at FROM portal_invites;

CREATE TABLE audit_log__new (
    id          INTEGER PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    detail      TEXT NOT NULL,
    client      TEXT NOT NULL,
    at          BIGINT NOT NULL
);
INSERT INTO audit_log__new (id, merchant_id, actor, action, subject, detail, client, at) SELECT id, merchant_id, actor, action, subject, detail, client, at FROM audit_log;

CREATE TABLE settlement_configs__new (
    account_id           BIGINT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    currency             TEXT NOT NULL,
    frequency            TEXT NOT NULL,
    treasury_account_id  BIGINT,
    bank_account         TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    updated_at           BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, account_id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, treasury_account_id) REFERENCES accounts__new (merchant_id, id)
);
INSERT INTO settlement_configs__new (account_id, merchant_id, currency, frequency, treasury_account_id, bank_account, endpoint_url, authorization_header, updated_at) SELECT account_id, merchant_id, currency, frequency, treasury_account_id, bank_account, endpoint_url, authorization_header, updated_at FROM settlement_configs;

CREATE TABLE settlements__new (
    uuid                 TEXT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    currency             TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    fee                  BIGINT NOT NULL,
    status               TEXT NOT NULL,
    frequency            TEXT NOT NULL,
    beneficiary          TEXT NOT NULL,
    treasury_account_id  BIGINT,
    balance_id           TEXT NOT NULL,
    eod_date             TEXT,
    failure_reason       TEXT,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    completed_at         BIGINT,
    updated_at           BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, uuid),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, treasury_account_id) REFERENCES accounts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records__new (merchant_id, id),
    UNIQUE (merchant_id, account_id, eod_date)
);
INSERT INTO settlements__new (uuid, merchant_id, account_id, currency, amount, fee, status, frequency, beneficiary, treasury_account_id, balance_id, eod_date, failure_reason, endpoint_url, authorization_header, created_at, completed_at, updated_at) SELECT uuid, merchant_id, account_id, currency, amount, fee, status, frequency, beneficiary, treasury_account_id, balance_id, eod_date, failure_reason, endpoint_url, authorization_header, created_at, completed_at, updated_at FROM settlements;

CREATE TABLE gateway_payments__new (
    id                   INTEGER PRIMARY KEY,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    order_id             TEXT NOT NULL,
    currency             TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    description          TEXT NOT NULL,
    order_success_url    TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    order_details        TEXT NOT NULL,
    status               TEXT NOT NULL,
    paid_with            TEXT NOT NULL DEFAULT '',
    card_brand           TEXT NOT NULL DEFAULT '',
    card_last4           TEXT NOT NULL DEFAULT '',
    failure_reason       TEXT NOT NULL DEFAULT '',
    attempts             INTEGER NOT NULL DEFAULT 0,
    balance_id           TEXT,
    expired_at           BIGINT NOT NULL,
    paid_at              BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    payment_request_id   BIGINT,
    UNIQUE (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records__new (merchant_id, id),
    UNIQUE (merchant_id, order_id)
);
INSERT INTO gateway_payments__new (id, merchant_id, account_id, order_id, currency, amount, description, order_success_url, endpoint_url, authorization_header, order_details, status, paid_with, card_brand, card_last4, failure_reason, attempts, balance_id, expired_at, paid_at, created_at, updated_at, payment_request_id) SELECT id, merchant_id, account_id, order_id, currency, amount, description, order_success_url, endpoint_url, authorization_header, order_details, status, paid_with, card_brand, card_last4, failure_reason, attempts, balance_id, expired_at, paid_at, created_at, updated_at, payment_request_id FROM gateway_payments;

CREATE TABLE treasury_submissions__new (
    id              TEXT NOT NULL,
    merchant_id     TEXT NOT NULL REFERENCES merchants(id),
    account_id      BIGINT NOT NULL,
    seq             INTEGER NOT NULL,
    status          TEXT NOT NULL,
    business_name   TEXT NOT NULL,
    business_number TEXT NOT NULL,
    address         TEXT NOT NULL,
    country         TEXT NOT NULL,
    contact_name    TEXT NOT NULL,
    contact_email   TEXT NOT NULL,
    reason          TEXT,
    submitted_at    BIGINT NOT NULL,
    reviewed_at     BIGINT,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    UNIQUE (merchant_id, account_id, seq)
);
INSERT INTO treasury_submissions__new (id, merchant_id, account_id, seq, status, business_name, business_number, address, country, contact_name, contact_email, reason, submitted_at, reviewed_at) SELECT id, merchant_id, account_id, seq, status, business_name, business_number, address, country, contact_name, contact_email, reason, submitted_at, reviewed_at FROM treasury_submissions;

CREATE TABLE transfers__new (
    uuid                 TEXT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    currency             TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    description          TEXT NOT NULL,
    from_account_id      BIGINT NOT NULL,
    to_account_id        BIGINT,
    bank_account         TEXT NOT NULL,
    status               TEXT NOT NULL,
    failure_reason       TEXT,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    completed_at         BIGINT,
    PRIMARY KEY (merchant_id, uuid),
    FOREIGN KEY (merchant_id, uuid) REFERENCES balance_records__new (merchant_id, id),
    FOREIGN KEY (merchant_id, from_account_id) REFERENCES accounts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, to_account_id) REFERENCES accounts__new (merchant_id, id)
);
INSERT INTO transfers__new (uuid, merchant_id, currency, amount, description, from_account_id, to_account_id, bank_account, status, failure_reason, endpoint_url, authorization_header, created_at, updated_at, completed_at) SELECT uuid, merchant_id, currency, amount, description, from_account_id, to_account_id, bank_account, status, failure_reason, endpoint_url, authorization_header, created_at, updated_at, completed_at FROM transfers;

CREATE TABLE reports__new (
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    id               TEXT NOT NULL,
    account_id       BIGINT NOT NULL,
    currency         TEXT NOT NULL,
    frequency        TEXT NOT NULL,
    period_start     BIGINT NOT NULL,
    period_end       BIGINT NOT NULL,
    file_name        TEXT NOT NULL,
    content_type     TEXT NOT NULL,
    content          BLOB NOT NULL,
    sha256           TEXT NOT NULL,
    settlement_count BIGINT NOT NULL,
    settled_amount   BIGINT NOT NULL,
    settled_fee      BIGINT NOT NULL,
    closing_balance  BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    UNIQUE (merchant_id, account_id, frequency, period_start)
);
INSERT INTO reports__new (merchant_id, id, account_id, currency, frequency, period_start, period_end, file_name, content_type, content, sha256, settlement_count, settled_amount, settled_fee, closing_balance, created_at) SELECT merchant_id, id, account_id, currency, frequency, period_start, period_end, file_name, content_type, content, sha256, settlement_count, settled_amount, settled_fee, closing_balance, created_at FROM reports;

CREATE TABLE payin_links__new (
    uuid                 TEXT NOT NULL,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    account_id           BIGINT NOT NULL,
    method               TEXT NOT NULL,
    currency             TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    description          TEXT NOT NULL,
    success_url          TEXT NOT NULL,
    failure_url          TEXT NOT NULL,
    endpoint_url         TEXT NOT NULL,
    authorization_header TEXT NOT NULL,
    meta_data            TEXT NOT NULL,
    status               TEXT NOT NULL,
    card_brand           TEXT NOT NULL DEFAULT '',
    card_last4           TEXT NOT NULL DEFAULT '',
    failure_reason       TEXT NOT NULL DEFAULT '',
    attempts             INTEGER NOT NULL DEFAULT 0,
    balance_id           TEXT,
    expires_at           BIGINT NOT NULL,
    paid_at              BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, uuid),
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts__new (merchant_id, id),
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records__new (merchant_id, id)
);
INSERT INTO payin_links__new (uuid, merchant_id, account_id, method, currency, amount, description, success_url, failure_url, endpoint_url, authorization_header, meta_data, status, card_brand, card_last4, failure_reason, attempts, balance_id, expires_at, paid_at, created_at, updated_at) SELECT uuid, merchant_id, account_id, method, currency, amount, description, success_url, failure_url, endpoint_url, authorization_header, meta_data, status, card_brand, card_last4, failure_reason, attempts, balance_id, expires_at, paid_at, created_at, updated_at FROM payin_links;

DROP TABLE payin_links;
DROP TABLE reports;
DROP TABLE transfers;
DROP TABLE treasury_submissions;
DROP TABLE gateway_payments;
DROP TABLE settlements;
DROP TABLE settlement_configs;
DROP TABLE audit_log;
DROP TABLE portal_invites;
DROP TABLE portal_sessions;
DROP TABLE static_payid_payments;
DROP TABLE static_payids;
DROP TABLE payment_requests;
DROP TABLE payids;
DROP TABLE rail_submissions;
DROP TABLE payout_transactions;
DROP TABLE payouts;
DROP TABLE customers;
DROP TABLE verification_messages;
DROP TABLE verification_tokens;
DROP TABLE kyc_documents;
DROP TABLE kyc_submissions;
DROP TABLE contacts;
DROP TABLE payin_refunds;
DROP TABLE payins;
DROP TABLE webhook_attempts;
DROP TABLE webhook_events;
DROP TABLE deposits;
DROP TABLE postings;
DROP TABLE journal_entries;
DROP TABLE balance_records;
DROP TABLE ledger_buckets;
DROP TABLE users;
DROP TABLE access_tokens;
DROP TABLE apps;
DROP TABLE accounts;

ALTER TABLE accounts__new RENAME TO accounts;
ALTER TABLE apps__new RENAME TO apps;
ALTER TABLE access_tokens__new RENAME TO access_tokens;
ALTER TABLE users__new RENAME TO users;
ALTER TABLE ledger_buckets__new RENAME TO ledger_buckets;
ALTER TABLE balance_records__new RENAME TO balance_records;
ALTER TABLE journal_entries__new RENAME TO journal_entries;
ALTER TABLE postings__new RENAME TO postings;
ALTER TABLE deposits__new RENAME TO deposits;
ALTER TABLE webhook_events__new RENAME TO webhook_events;
ALTER TABLE webhook_attempts__new RENAME TO webhook_attempts;
ALTER TABLE payins__new RENAME TO payins;
ALTER TABLE payin_refunds__new RENAME TO payin_refunds;
ALTER TABLE contacts__new RENAME TO contacts;
ALTER TABLE kyc_submissions__new RENAME TO kyc_submissions;
ALTER TABLE kyc_documents__new RENAME TO kyc_documents;
ALTER TABLE verification_tokens__new RENAME TO verification_tokens;
ALTER TABLE verification_messages__new RENAME TO verification_messages;
ALTER TABLE customers__new RENAME TO customers;
ALTER TABLE payouts__new RENAME TO payouts;
ALTER TABLE payout_transactions__new RENAME TO payout_transactions;
ALTER TABLE rail_submissions__new RENAME TO rail_submissions;
ALTER TABLE payids__new RENAME TO payids;
ALTER TABLE payment_requests__new RENAME TO payment_requests;
ALTER TABLE static_payids__new RENAME TO static_payids;
ALTER TABLE static_payid_payments__new RENAME TO static_payid_payments;
ALTER TABLE portal_sessions__new RENAME TO portal_sessions;
ALTER TABLE portal_invites__new RENAME TO portal_invites;
ALTER TABLE audit_log__new RENAME TO audit_log;
ALTER TABLE settlement_configs__new RENAME TO settlement_configs;
ALTER TABLE settlements__new RENAME TO settlements;
ALTER TABLE gateway_payments__new RENAME TO gateway_payments;
ALTER TABLE treasury_submissions__new RENAME TO treasury_submissions;
ALTER TABLE transfers__new RENAME TO transfers;
ALTER TABLE reports__new RENAME TO reports;
ALTER TABLE payin_links__new RENAME TO payin_links;

CREATE INDEX apps_merchant ON apps (merchant_id);
CREATE INDEX access_tokens_expiry ON access_tokens (expires_at);
CREATE INDEX balance_records_history ON balance_records (account_id, created_at, id);
CREATE INDEX balance_records_reference ON balance_records (merchant_id, reference_id);
CREATE INDEX journal_entries_record ON journal_entries (balance_record_id);
CREATE INDEX postings_bucket ON postings (bucket_id, id);
CREATE INDEX postings_entry ON postings (entry_id);
CREATE INDEX deposits_merchant ON deposits (merchant_id, created_at);
CREATE INDEX webhook_events_due ON webhook_events (status, next_attempt_at);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, attempt);
CREATE INDEX payins_list ON payins (merchant_id, created_at);
CREATE INDEX payins_external ON payins (merchant_id, external_id);
CREATE INDEX payin_refunds_payin ON payin_refunds (payin_uuid);
CREATE INDEX contacts_list ON contacts (merchant_id, created_at, id);
CREATE INDEX kyc_submissions_contact ON kyc_submissions (contact_id, id);
CREATE INDEX verification_tokens_contact ON verification_tokens (contact_id);
CREATE INDEX verification_messages_list ON verification_messages (merchant_id, created_at, id);
CREATE UNIQUE INDEX customers_external_id ON customers (merchant_id, external_id) WHERE external_id <> '';
CREATE INDEX customers_list ON customers (merchant_id, created_at, id);
CREATE INDEX customers_email ON customers (merchant_id, email_key);
CREATE INDEX payouts_list ON payouts (merchant_id, created_at);
CREATE INDEX payouts_external ON payouts (merchant_id, external_id);
CREATE UNIQUE INDEX payout_transactions_order ON payout_transactions (merchant_id, payout_id, seq);
CREATE INDEX payment_requests_list ON payment_requests (merchant_id, created_at);
CREATE INDEX static_payids_list ON static_payids (merchant_id, created_at);
CREATE INDEX static_payid_payments_list ON static_payid_payments (merchant_id, static_id, received_at);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);
CREATE INDEX audit_log_list ON audit_log (merchant_id, at);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE INDEX settlements_list ON settlements (merchant_id, created_at);
CREATE INDEX gateway_payments_merchant ON gateway_payments (merchant_id, id);
CREATE UNIQUE INDEX accounts_public_id ON accounts (merchant_id, public_id);
CREATE INDEX transfers_merchant ON transfers (merchant_id, created_at);
CREATE INDEX reports_list ON reports (merchant_id, account_id, period_end, id);
CREATE INDEX journal_entries_time ON journal_entries (merchant_id, created_at);
CREATE TRIGGER reports_no_update BEFORE UPDATE ON reports BEGIN SELECT RAISE(ABORT, 'reports are immutable'); END;
CREATE TRIGGER reports_no_delete BEFORE DELETE ON reports BEGIN SELECT RAISE(ABORT, 'reports are immutable'); END;
CREATE INDEX payin_links_merchant ON payin_links (merchant_id, created_at);
CREATE INDEX gateway_payments_payid ON gateway_payments (merchant_id, payment_request_id);
CREATE INDEX webhook_events_endpoint_due ON webhook_events (status, endpoint_url, next_attempt_at);
CREATE UNIQUE INDEX webhook_events_seq ON webhook_events (seq);
CREATE INDEX webhook_events_record ON webhook_events (merchant_id, record_uuid, seq);

-- The webhook dispatcher leases, records and releases events by id alone,
-- across merchants (one claim serves every endpoint): this index serves it
-- now that the primary key leads with merchant_id.
CREATE INDEX webhook_events_id ON webhook_events (id);
