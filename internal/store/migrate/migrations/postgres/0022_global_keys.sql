-- Global keys (store/keys.go): the keys looked up before their merchant is
-- known are claimed here, and this table's key is what keeps them unique
-- across merchants. The tables that hold them are unique only within a
-- merchant from now on, as a table distributed by merchant_id must be.
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

ALTER TABLE apps DROP CONSTRAINT apps_app_id_key;
ALTER TABLE access_tokens DROP CONSTRAINT access_tokens_token_hash_key;
ALTER TABLE accounts DROP CONSTRAINT accounts_account_number_key,
    ADD CONSTRAINT accounts_account_number_key UNIQUE (merchant_id, account_number);
ALTER TABLE users DROP CONSTRAINT users_email_key,
    ADD CONSTRAINT users_email_key UNIQUE (merchant_id, email);
ALTER TABLE portal_sessions DROP CONSTRAINT portal_sessions_token_hash_key;
ALTER TABLE portal_invites DROP CONSTRAINT portal_invites_token_hash_key;
ALTER TABLE verification_tokens DROP CONSTRAINT verification_tokens_token_hash_key;
ALTER TABLE payids DROP CONSTRAINT payids_payid_key;
ALTER TABLE payins DROP CONSTRAINT payins_uuid_key;
ALTER TABLE payin_links DROP CONSTRAINT payin_links_uuid_key;
ALTER TABLE gateway_payments DROP CONSTRAINT gateway_payments_id_key;
