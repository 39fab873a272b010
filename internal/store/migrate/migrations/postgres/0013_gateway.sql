-- Payment gateway v1 (hosted checkout): one row per create_payment. payment_id
-- is id; order_id is unique per merchant. Card payments keep only the brand
-- and the last four digits, never the number or the CVC.
CREATE TABLE gateway_payments (
    id                    BIGSERIAL PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    account_id            BIGINT NOT NULL REFERENCES accounts(id),
    order_id              TEXT NOT NULL,
    currency              TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    description           TEXT NOT NULL,
    order_success_url     TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    order_details         TEXT NOT NULL,
    status                TEXT NOT NULL,
    paid_with             TEXT NOT NULL DEFAULT '',
    card_brand            TEXT NOT NULL DEFAULT '',
    card_last4            TEXT NOT NULL DEFAULT '',
    failure_reason        TEXT NOT NULL DEFAULT '',
    attempts              INTEGER NOT NULL DEFAULT 0,
    balance_id            TEXT REFERENCES balance_records(id),
    expired_at            BIGINT NOT NULL,
    paid_at               BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    UNIQUE (merchant_id, order_id)
);
CREATE INDEX gateway_payments_merchant ON gateway_payments (merchant_id, id);
