-- Global keys (store/keys.go), as on PostgreSQL (its 0022 says why). The
-- tables that hold such keys were rebuilt by 0021 unique only within a
-- merchant; this table's key keeps them unique across merchants.
CREATE TABLE global_keys (
    key         TEXT NOT NULL,
    kind        TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    PRIMARY KEY (key, kind)
);

INSERT INTO global_keys (key, kind, merchant_id)
          SELECT app_id, 'app', merchant_id FROM apps
UNION ALL SELECT token_hash, 'access_token', merchant_id FROM access_tokens
UNION ALL SELECT account_number, 'account_number', merchant_id FROM accounts
UNION ALL SELECT email, 'portal_email', merchant_id FROM users
UNION ALL SELECT token_hash, 'portal_session', merchant_id FROM portal_sessions
UNION ALL SELECT token_hash, 'portal_invite', merchant_id FROM portal_invites
UNION ALL SELECT token_hash, 'verification_token', merchant_id FROM verification_tokens
UNION ALL SELECT payid, 'payid', merchant_id FROM payids
UNION ALL SELECT uuid, 'payin', merchant_id FROM payins
UNION ALL SELECT uuid, 'payin_link', merchant_id FROM payin_links
UNION ALL SELECT CAST(id AS TEXT), 'gateway_payment', merchant_id FROM gateway_payments;

CREATE UNIQUE INDEX accounts_account_number_key ON accounts (merchant_id, account_number);
CREATE UNIQUE INDEX users_email_key ON users (merchant_id, email);
