CREATE TABLE payins (
    uuid                  TEXT PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    account_id            BIGINT NOT NULL REFERENCES accounts(id),
    method                TEXT NOT NULL,
    currency              TEXT NOT NULL,
    status                TEXT NOT NULL,
    stage                 TEXT NOT NULL DEFAULT '',
    amount                BIGINT NOT NULL,
    gst                   BOOLEAN NOT NULL,
    gst_amount            BIGINT NOT NULL,
    total                 BIGINT NOT NULL,
    paid_amount           BIGINT NOT NULL DEFAULT 0,
    fee                   BIGINT NOT NULL DEFAULT 0,
    reserve               BIGINT NOT NULL DEFAULT 0,
    refunded              BIGINT NOT NULL DEFAULT 0,
    last_refund           BIGINT NOT NULL DEFAULT 0,
    refund_description    TEXT NOT NULL DEFAULT '',
    name                  TEXT NOT NULL,
    email                 TEXT NOT NULL,
    external_id           TEXT NOT NULL,
    description           TEXT NOT NULL,
    params                TEXT NOT NULL,
    pay_code              TEXT NOT NULL,
    metadata              TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    otp_attempts          INTEGER NOT NULL DEFAULT 0,
    balance_id            TEXT,
    expired_at            BIGINT NOT NULL,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX payins_list ON payins (merchant_id, created_at);
CREATE INDEX payins_external ON payins (merchant_id, external_id);

CREATE TABLE payin_refunds (
    uuid         TEXT PRIMARY KEY,
    payin_uuid   TEXT NOT NULL REFERENCES payins(uuid),
    merchant_id  TEXT NOT NULL,
    amount       BIGINT NOT NULL,
    description  TEXT NOT NULL,
    status       TEXT NOT NULL,
    balance_id   TEXT NOT NULL REFERENCES balance_records(id),
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX payin_refunds_payin ON payin_refunds (payin_uuid);

-- Server-wide secrets (signing keys of pre-signed links), shared by every node.
CREATE TABLE secrets (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
