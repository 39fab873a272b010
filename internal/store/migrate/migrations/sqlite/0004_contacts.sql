-- Contacts (CONTRACT §8): the people and organisations a merchant knows by
-- email. email_key is the lower-cased email, so an email identifies one
-- contact per merchant whatever its case.
CREATE TABLE contacts (
    id           INTEGER PRIMARY KEY,
    uuid         TEXT NOT NULL UNIQUE,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    email        TEXT NOT NULL,
    email_key    TEXT NOT NULL,
    first_name   TEXT NOT NULL,
    last_name    TEXT NOT NULL,
    type         TEXT NOT NULL,
    dob          TEXT NOT NULL,
    reg_no       TEXT NOT NULL,
    phone        TEXT NOT NULL,
    gender       TEXT NOT NULL,
    street       TEXT NOT NULL,
    city         TEXT NOT NULL,
    postal_code  TEXT NOT NULL,
    state        TEXT NOT NULL,
    country      TEXT NOT NULL,
    kyc_status   TEXT NOT NULL DEFAULT '',
    verified_at  BIGINT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (merchant_id, email_key)
);
CREATE INDEX contacts_list ON contacts (merchant_id, created_at, id);

-- KYC: each submission keeps its document details, the webhook target its
-- status changes go to, and its decision; the files are kept beside it.
CREATE TABLE kyc_submissions (
    id                    INTEGER PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    contact_id            BIGINT NOT NULL REFERENCES contacts(id),
    document_type         TEXT NOT NULL,
    document_number       TEXT NOT NULL,
    issue_date            TEXT NOT NULL,
    expiry_date           TEXT NOT NULL,
    issue_country         TEXT NOT NULL,
    nationality           TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    status                TEXT NOT NULL,
    created_at            BIGINT NOT NULL,
    decided_at            BIGINT
);
CREATE INDEX kyc_submissions_contact ON kyc_submissions (contact_id, id);

CREATE TABLE kyc_documents (
    id             INTEGER PRIMARY KEY,
    submission_id  BIGINT NOT NULL REFERENCES kyc_submissions(id),
    merchant_id    TEXT NOT NULL,
    part           TEXT NOT NULL,
    content_type   TEXT NOT NULL,
    size_bytes     BIGINT NOT NULL,
    sha256         TEXT NOT NULL,
    content        BLOB NOT NULL,
    created_at     BIGINT NOT NULL,
    UNIQUE (submission_id, part)
);

-- Identity verification links: only the hash of a link's token is kept. A
-- contact has at most one live link: a new one marks the previous replaced,
-- and opening the page's form marks it used.
CREATE TABLE verification_tokens (
    token_hash   TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    contact_id   BIGINT NOT NULL REFERENCES contacts(id),
    expires_at   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    replaced_at  BIGINT,
    used_at      BIGINT
);
CREATE INDEX verification_tokens_contact ON verification_tokens (contact_id);

-- The sandbox outbox of verification messages (email or SMS), which
-- GET /v2/contacts/verification_messages reads.
CREATE TABLE verification_messages (
    id           INTEGER PRIMARY KEY,
    uuid         TEXT NOT NULL UNIQUE,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    contact_id   BIGINT NOT NULL REFERENCES contacts(id),
    channel      TEXT NOT NULL,
    recipient    TEXT NOT NULL,
    body         TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX verification_messages_list ON verification_messages (merchant_id, created_at, id);

-- Customers: the merchant's own customer records. external_id (the
-- merchant's customer id) is unique per merchant when given; metadata is a
-- JSON object of strings.
CREATE TABLE customers (
    id           INTEGER PRIMARY KEY,
    uuid         TEXT NOT NULL UNIQUE,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    first_name   TEXT NOT NULL,
    last_name    TEXT NOT NULL,
    email        TEXT NOT NULL,
    email_key    TEXT NOT NULL,
    phone        TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    street       TEXT NOT NULL,
    city         TEXT NOT NULL,
    postal_code  TEXT NOT NULL,
    state        TEXT NOT NULL,
    country      TEXT NOT NULL,
    metadata     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX customers_external_id ON customers (merchant_id, external_id) WHERE external_id <> '';
CREATE INDEX customers_list ON customers (merchant_id, created_at, id);
CREATE INDEX customers_email ON customers (merchant_id, email_key);
