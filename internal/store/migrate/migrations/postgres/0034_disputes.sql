-- Disputes of card payments and card refunds (CONTRACT §22, §25). Every
-- merchant's rows: keyed by merchant_id, and on Citus distributed by it
-- (created without foreign keys, distributed at the marker, then the keys).

-- A dispute of one card payment (payment_type gateway_payment or
-- payin_link, payment_id its id or uuid): at most one a payment. The
-- evidence's text fields are evidence (a JSON object); its files are
-- dispute_files. record_id is the dispute's money_out balance record,
-- fee_record_id the dispute_fee one once lost; target is the payment's
-- notification target, where the dispute's events go.
CREATE TABLE disputes (
    merchant_id            TEXT NOT NULL,
    uuid                   TEXT NOT NULL,
    payment_type           TEXT NOT NULL,
    payment_id             TEXT NOT NULL,
    account_id             BIGINT NOT NULL,
    currency               TEXT NOT NULL,
    amount                 BIGINT NOT NULL,
    reason                 TEXT NOT NULL,
    reason_code            TEXT NOT NULL,
    status                 TEXT NOT NULL,
    due_by                 BIGINT NOT NULL,
    evidence               TEXT NOT NULL,
    evidence_submitted_at  BIGINT,
    fee                    BIGINT,
    record_id              TEXT NOT NULL,
    fee_record_id          TEXT,
    endpoint_url           TEXT NOT NULL,
    authorization_header   TEXT NOT NULL,
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL,
    CONSTRAINT disputes_key PRIMARY KEY (merchant_id, uuid)
);
CREATE UNIQUE INDEX disputes_payment ON disputes (merchant_id, payment_type, payment_id);
CREATE INDEX disputes_list ON disputes (merchant_id, created_at, uuid);

-- A file of a dispute's evidence, kept in the database (so in its backups),
-- checked by content to be a PDF, PNG or JPEG.
CREATE TABLE dispute_files (
    merchant_id   TEXT NOT NULL,
    dispute_uuid  TEXT NOT NULL,
    id            TEXT NOT NULL,
    name          TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    size          BIGINT NOT NULL,
    sha256        TEXT NOT NULL,
    data          BYTEA NOT NULL,
    created_at    BIGINT NOT NULL,
    CONSTRAINT dispute_files_key PRIMARY KEY (merchant_id, dispute_uuid, id)
);

-- A refund of a card payment: money_out from available, done at once.
CREATE TABLE card_refunds (
    merchant_id   TEXT NOT NULL,
    uuid          TEXT NOT NULL,
    payment_type  TEXT NOT NULL,
    payment_id    TEXT NOT NULL,
    currency      TEXT NOT NULL,
    amount        BIGINT NOT NULL,
    record_id     TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    CONSTRAINT card_refunds_key PRIMARY KEY (merchant_id, uuid)
);
CREATE INDEX card_refunds_payment ON card_refunds (merchant_id, payment_type, payment_id);

-- The fee a lost dispute debits (minor units of the account's currency);
-- null: 25.00 in the currency.
ALTER TABLE accounts ADD COLUMN dispute_fee BIGINT;
-- payd: distribute
ALTER TABLE disputes ADD CONSTRAINT disputes_merchant FOREIGN KEY (merchant_id) REFERENCES merchants (id);
ALTER TABLE dispute_files ADD CONSTRAINT dispute_files_dispute
    FOREIGN KEY (merchant_id, dispute_uuid) REFERENCES disputes (merchant_id, uuid);
ALTER TABLE card_refunds ADD CONSTRAINT card_refunds_merchant FOREIGN KEY (merchant_id) REFERENCES merchants (id);
