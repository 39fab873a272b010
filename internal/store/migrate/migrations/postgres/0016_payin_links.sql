-- Payment Gateway 3 (CONTRACT §11): one row per POST /v3/payin_links. A card
-- attempt keeps only the brand and the last four digits, never the number
-- or the CVC.
CREATE TABLE payin_links (
    uuid                  TEXT PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    account_id            BIGINT NOT NULL REFERENCES accounts(id),
    method                TEXT NOT NULL,
    currency              TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    description           TEXT NOT NULL,
    success_url           TEXT NOT NULL,
    failure_url           TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    meta_data             TEXT NOT NULL,
    status                TEXT NOT NULL,
    card_brand            TEXT NOT NULL DEFAULT '',
    card_last4            TEXT NOT NULL DEFAULT '',
    failure_reason        TEXT NOT NULL DEFAULT '',
    attempts              INTEGER NOT NULL DEFAULT 0,
    balance_id            TEXT REFERENCES balance_records(id),
    expires_at            BIGINT NOT NULL,
    paid_at               BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX payin_links_merchant ON payin_links (merchant_id, created_at);

-- The origins besides a link's redirect_url.success that may frame its
-- Payment Gateway 3 page: a comma-separated list of scheme://host[:port].
ALTER TABLE merchants ADD COLUMN embed_origins TEXT NOT NULL DEFAULT '';

-- The one-time PayID request a v1 checkout offers (issue 14 item 2).
ALTER TABLE gateway_payments ADD COLUMN payment_request_id BIGINT;
CREATE INDEX gateway_payments_payid ON gateway_payments (merchant_id, payment_request_id);
