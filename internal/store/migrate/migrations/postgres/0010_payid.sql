-- AUD PayID (CONTRACT §9). payids registers every PayID payd ever handed
-- out, one-time or static, so that none is ever handed out twice and a
-- payment names its merchant; deregistered_at is set for good once a
-- one-time PayID can take no more payments.
CREATE TABLE payids (
    payid            TEXT PRIMARY KEY,
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    kind             TEXT NOT NULL,
    ref_id           BIGINT NOT NULL,
    deregistered_at  BIGINT,
    created_at       BIGINT NOT NULL
);

-- One-time payment requests: each has its own PayID.
CREATE TABLE payment_requests (
    id                    BIGSERIAL PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    account_id            BIGINT NOT NULL REFERENCES accounts(id),
    payid                 TEXT NOT NULL UNIQUE,
    name                  TEXT NOT NULL,
    description           TEXT NOT NULL,
    external_id           TEXT NOT NULL,
    emails                TEXT NOT NULL,
    gst                   BOOLEAN NOT NULL,
    amount                BIGINT NOT NULL,
    gst_amount            BIGINT NOT NULL,
    total                 BIGINT NOT NULL,
    fee                   BIGINT NOT NULL DEFAULT 0,
    status                TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    metadata              TEXT NOT NULL,
    expired_at            BIGINT NOT NULL,
    cancelled_at          BIGINT,
    paid_amount           BIGINT NOT NULL DEFAULT 0,
    payer_name            TEXT NOT NULL DEFAULT '',
    paid_at               BIGINT,
    balance_id            TEXT,
    return_balance_id     TEXT,
    return_reason         TEXT NOT NULL DEFAULT '',
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX payment_requests_list ON payment_requests (merchant_id, created_at);

-- Static open PayIDs: one per merchant customer id, each payment its own row.
CREATE TABLE static_payids (
    id                    BIGSERIAL PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    account_id            BIGINT NOT NULL REFERENCES accounts(id),
    payid                 TEXT NOT NULL UNIQUE,
    customer_id           TEXT NOT NULL,
    name                  TEXT NOT NULL,
    email                 TEXT NOT NULL,
    phone                 TEXT NOT NULL,
    address               TEXT NOT NULL,
    city                  TEXT NOT NULL,
    state                 TEXT NOT NULL,
    zip_code              TEXT NOT NULL,
    status                TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    created_at            BIGINT NOT NULL,
    UNIQUE (merchant_id, customer_id)
);
CREATE INDEX static_payids_list ON static_payids (merchant_id, created_at);

CREATE TABLE static_payid_payments (
    id           BIGSERIAL PRIMARY KEY,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    static_id    BIGINT NOT NULL REFERENCES static_payids(id),
    amount       BIGINT NOT NULL,
    fee          BIGINT NOT NULL,
    payer_name   TEXT NOT NULL,
    balance_id   TEXT NOT NULL,
    received_at  BIGINT NOT NULL
);
CREATE INDEX static_payid_payments_list ON static_payid_payments (merchant_id, static_id, received_at);
