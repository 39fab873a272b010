-- Every merchant-owned table is keyed by merchant (DESIGN.md, "Storage";
-- issue 19): its primary key and unique constraints lead with merchant_id,
-- and a foreign key to another merchant-owned table includes merchant_id, so
-- a row can only ever point at a row of its own merchant, and the tables can
-- be distributed by merchant_id (Citus), where every key must include it.
--
-- A few keys are looked up before the merchant is known and must stay unique
-- across merchants: an app-id and an access token (API authentication), a
-- portal user's email, session and invite tokens, an identity verification
-- token, a PayID, an account number, and the ids of hosted pages (a payin's
-- /pay/{uuid}, a payin link's /links/{uuid}, a gateway payment's
-- /checkout/{id}). They keep a unique constraint of their own here beside
-- the merchant key.

-- 1. Foreign keys between merchant-owned tables go first: they hang on the
--    single-column keys that are replaced below.
ALTER TABLE apps DROP CONSTRAINT apps_account_id_fkey;
ALTER TABLE access_tokens DROP CONSTRAINT access_tokens_app_id_fkey;
ALTER TABLE ledger_buckets DROP CONSTRAINT ledger_buckets_account_id_fkey;
ALTER TABLE balance_records DROP CONSTRAINT balance_records_account_id_fkey;
ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_balance_record_id_fkey;
ALTER TABLE postings DROP CONSTRAINT postings_bucket_id_fkey;
ALTER TABLE postings DROP CONSTRAINT postings_entry_id_fkey;
ALTER TABLE deposits DROP CONSTRAINT deposits_account_id_fkey;
ALTER TABLE deposits DROP CONSTRAINT deposits_balance_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_id_fkey;
ALTER TABLE payins DROP CONSTRAINT payins_account_id_fkey;
ALTER TABLE payin_refunds DROP CONSTRAINT payin_refunds_balance_id_fkey;
ALTER TABLE payin_refunds DROP CONSTRAINT payin_refunds_payin_uuid_fkey;
ALTER TABLE kyc_submissions DROP CONSTRAINT kyc_submissions_contact_id_fkey;
ALTER TABLE kyc_documents DROP CONSTRAINT kyc_documents_submission_id_fkey;
ALTER TABLE verification_tokens DROP CONSTRAINT verification_tokens_contact_id_fkey;
ALTER TABLE verification_messages DROP CONSTRAINT verification_messages_contact_id_fkey;
ALTER TABLE payouts DROP CONSTRAINT payouts_account_id_fkey;
ALTER TABLE payout_transactions DROP CONSTRAINT payout_transactions_balance_id_fkey;
ALTER TABLE payout_transactions DROP CONSTRAINT payout_transactions_payout_id_fkey;
ALTER TABLE payment_requests DROP CONSTRAINT payment_requests_account_id_fkey;
ALTER TABLE static_payids DROP CONSTRAINT static_payids_account_id_fkey;
ALTER TABLE static_payid_payments DROP CONSTRAINT static_payid_payments_static_id_fkey;
ALTER TABLE portal_sessions DROP CONSTRAINT portal_sessions_user_id_fkey;
ALTER TABLE portal_invites DROP CONSTRAINT portal_invites_user_id_fkey;
ALTER TABLE settlement_configs DROP CONSTRAINT settlement_configs_account_id_fkey;
ALTER TABLE settlement_configs DROP CONSTRAINT settlement_configs_treasury_account_id_fkey;
ALTER TABLE settlements DROP CONSTRAINT settlements_account_id_fkey;
ALTER TABLE settlements DROP CONSTRAINT settlements_balance_id_fkey;
ALTER TABLE settlements DROP CONSTRAINT settlements_treasury_account_id_fkey;
ALTER TABLE gateway_payments DROP CONSTRAINT gateway_payments_account_id_fkey;
ALTER TABLE gateway_payments DROP CONSTRAINT gateway_payments_balance_id_fkey;
ALTER TABLE treasury_submissions DROP CONSTRAINT treasury_submissions_account_id_fkey;
ALTER TABLE transfers DROP CONSTRAINT transfers_from_account_id_fkey;
ALTER TABLE transfers DROP CONSTRAINT transfers_to_account_id_fkey;
ALTER TABLE transfers DROP CONSTRAINT transfers_uuid_fkey;
ALTER TABLE reports DROP CONSTRAINT reports_account_id_fkey;
ALTER TABLE payin_links DROP CONSTRAINT payin_links_account_id_fkey;
ALTER TABLE payin_links DROP CONSTRAINT payin_links_balance_id_fkey;

-- 2. Primary keys and unique constraints lead with merchant_id.
ALTER TABLE accounts DROP CONSTRAINT accounts_pkey, ADD PRIMARY KEY (merchant_id, id);
DROP INDEX accounts_public_id;
CREATE UNIQUE INDEX accounts_public_id ON accounts (merchant_id, public_id);

ALTER TABLE apps DROP CONSTRAINT apps_pkey, ADD PRIMARY KEY (merchant_id, app_id),
    ADD CONSTRAINT apps_app_id_key UNIQUE (app_id);
ALTER TABLE access_tokens DROP CONSTRAINT access_tokens_pkey, ADD PRIMARY KEY (merchant_id, token_hash),
    ADD CONSTRAINT access_tokens_token_hash_key UNIQUE (token_hash);
ALTER TABLE users DROP CONSTRAINT users_pkey, ADD PRIMARY KEY (merchant_id, id);

ALTER TABLE ledger_buckets DROP CONSTRAINT ledger_buckets_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT ledger_buckets_account_name_slot,
    ADD CONSTRAINT ledger_buckets_account_name_slot UNIQUE (merchant_id, account_id, name, slot);
ALTER TABLE balance_records DROP CONSTRAINT balance_records_pkey, ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_pkey, ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE postings DROP CONSTRAINT postings_pkey, ADD PRIMARY KEY (merchant_id, id);

ALTER TABLE deposits DROP CONSTRAINT deposits_pkey, ADD PRIMARY KEY (merchant_id, uuid);
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_pkey, ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey, ADD PRIMARY KEY (merchant_id, id);

ALTER TABLE payins DROP CONSTRAINT payins_pkey, ADD PRIMARY KEY (merchant_id, uuid),
    ADD CONSTRAINT payins_uuid_key UNIQUE (uuid);
ALTER TABLE payin_refunds DROP CONSTRAINT payin_refunds_pkey, ADD PRIMARY KEY (merchant_id, uuid);

ALTER TABLE contacts DROP CONSTRAINT contacts_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT contacts_uuid_key, ADD CONSTRAINT contacts_uuid_key UNIQUE (merchant_id, uuid);
ALTER TABLE kyc_submissions DROP CONSTRAINT kyc_submissions_pkey, ADD PRIMARY KEY (merchant_id, id);
ALTER TABLE kyc_documents DROP CONSTRAINT kyc_documents_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT kyc_documents_submission_id_part_key,
    ADD CONSTRAINT kyc_documents_submission_id_part_key UNIQUE (merchant_id, submission_id, part);
ALTER TABLE verification_tokens DROP CONSTRAINT verification_tokens_pkey, ADD PRIMARY KEY (merchant_id, token_hash),
    ADD CONSTRAINT verification_tokens_token_hash_key UNIQUE (token_hash);
ALTER TABLE verification_messages DROP CONSTRAINT verification_messages_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT verification_messages_uuid_key, ADD CONSTRAINT verification_messages_uuid_key UNIQUE (merchant_id, uuid);
ALTER TABLE customers DROP CONSTRAINT customers_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT customers_uuid_key, ADD CONSTRAINT customers_uuid_key UNIQUE (merchant_id, uuid);

ALTER TABLE payouts DROP CONSTRAINT payouts_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT payouts_uuid_key, ADD CONSTRAINT payouts_uuid_key UNIQUE (merchant_id, uuid);
ALTER TABLE payout_transactions DROP CONSTRAINT payout_transactions_pkey, ADD PRIMARY KEY (merchant_id, uuid);
DROP INDEX payout_transactions_order;
CREATE UNIQUE INDEX payout_transactions_order ON payout_transactions (merchant_id, payout_id, seq);
ALTER TABLE rail_submissions DROP CONSTRAINT rail_submissions_pkey, ADD PRIMARY KEY (merchant_id, key);

ALTER TABLE payids DROP CONSTRAINT payids_pkey, ADD PRIMARY KEY (merchant_id, payid),
    ADD CONSTRAINT payids_payid_key UNIQUE (payid);
ALTER TABLE payment_requests DROP CONSTRAINT payment_requests_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT payment_requests_payid_key, ADD CONSTRAINT payment_requests_payid_key UNIQUE (merchant_id, payid);
ALTER TABLE static_payids DROP CONSTRAINT static_payids_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT static_payids_payid_key, ADD CONSTRAINT static_payids_payid_key UNIQUE (merchant_id, payid);
ALTER TABLE static_payid_payments DROP CONSTRAINT static_payid_payments_pkey, ADD PRIMARY KEY (merchant_id, id);

ALTER TABLE portal_sessions DROP CONSTRAINT portal_sessions_pkey, ADD PRIMARY KEY (merchant_id, token_hash),
    ADD CONSTRAINT portal_sessions_token_hash_key UNIQUE (token_hash);
ALTER TABLE portal_invites DROP CONSTRAINT portal_invites_pkey, ADD PRIMARY KEY (merchant_id, token_hash),
    ADD CONSTRAINT portal_invites_token_hash_key UNIQUE (token_hash);
ALTER TABLE audit_log DROP CONSTRAINT audit_log_pkey, ADD PRIMARY KEY (merchant_id, id);

ALTER TABLE settlement_configs DROP CONSTRAINT settlement_configs_pkey, ADD PRIMARY KEY (merchant_id, account_id);
ALTER TABLE settlements DROP CONSTRAINT settlements_pkey, ADD PRIMARY KEY (merchant_id, uuid),
    DROP CONSTRAINT settlements_account_id_eod_date_key,
    ADD CONSTRAINT settlements_account_id_eod_date_key UNIQUE (merchant_id, account_id, eod_date);
ALTER TABLE gateway_payments DROP CONSTRAINT gateway_payments_pkey, ADD PRIMARY KEY (merchant_id, id),
    ADD CONSTRAINT gateway_payments_id_key UNIQUE (id);
ALTER TABLE treasury_submissions DROP CONSTRAINT treasury_submissions_pkey, ADD PRIMARY KEY (merchant_id, id),
    DROP CONSTRAINT treasury_submissions_account_id_seq_key,
    ADD CONSTRAINT treasury_submissions_account_id_seq_key UNIQUE (merchant_id, account_id, seq);
ALTER TABLE transfers DROP CONSTRAINT transfers_pkey, ADD PRIMARY KEY (merchant_id, uuid);
ALTER TABLE payin_links DROP CONSTRAINT payin_links_pkey, ADD PRIMARY KEY (merchant_id, uuid),
    ADD CONSTRAINT payin_links_uuid_key UNIQUE (uuid);

-- 3. Foreign keys again, each including merchant_id.
ALTER TABLE apps ADD CONSTRAINT apps_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE access_tokens ADD CONSTRAINT access_tokens_app_id_fkey
    FOREIGN KEY (merchant_id, app_id) REFERENCES apps (merchant_id, app_id);
ALTER TABLE ledger_buckets ADD CONSTRAINT ledger_buckets_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE balance_records ADD CONSTRAINT balance_records_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_balance_record_id_fkey
    FOREIGN KEY (merchant_id, balance_record_id) REFERENCES balance_records (merchant_id, id);
ALTER TABLE postings ADD CONSTRAINT postings_bucket_id_fkey
    FOREIGN KEY (merchant_id, bucket_id) REFERENCES ledger_buckets (merchant_id, id);
ALTER TABLE postings ADD CONSTRAINT postings_entry_id_fkey
    FOREIGN KEY (merchant_id, entry_id) REFERENCES journal_entries (merchant_id, id);
ALTER TABLE deposits ADD CONSTRAINT deposits_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE deposits ADD CONSTRAINT deposits_balance_id_fkey
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records (merchant_id, id);
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_event_id_fkey
    FOREIGN KEY (merchant_id, event_id) REFERENCES webhook_events (merchant_id, id);
ALTER TABLE payins ADD CONSTRAINT payins_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE payin_refunds ADD CONSTRAINT payin_refunds_balance_id_fkey
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records (merchant_id, id);
ALTER TABLE payin_refunds ADD CONSTRAINT payin_refunds_payin_uuid_fkey
    FOREIGN KEY (merchant_id, payin_uuid) REFERENCES payins (merchant_id, uuid);
ALTER TABLE kyc_submissions ADD CONSTRAINT kyc_submissions_contact_id_fkey
    FOREIGN KEY (merchant_id, contact_id) REFERENCES contacts (merchant_id, id);
ALTER TABLE kyc_documents ADD CONSTRAINT kyc_documents_submission_id_fkey
    FOREIGN KEY (merchant_id, submission_id) REFERENCES kyc_submissions (merchant_id, id);
ALTER TABLE verification_tokens ADD CONSTRAINT verification_tokens_contact_id_fkey
    FOREIGN KEY (merchant_id, contact_id) REFERENCES contacts (merchant_id, id);
ALTER TABLE verification_messages ADD CONSTRAINT verification_messages_contact_id_fkey
    FOREIGN KEY (merchant_id, contact_id) REFERENCES contacts (merchant_id, id);
ALTER TABLE payouts ADD CONSTRAINT payouts_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE payout_transactions ADD CONSTRAINT payout_transactions_balance_id_fkey
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records (merchant_id, id);
ALTER TABLE payout_transactions ADD CONSTRAINT payout_transactions_payout_id_fkey
    FOREIGN KEY (merchant_id, payout_id) REFERENCES payouts (merchant_id, id);
ALTER TABLE payment_requests ADD CONSTRAINT payment_requests_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE static_payids ADD CONSTRAINT static_payids_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE static_payid_payments ADD CONSTRAINT static_payid_payments_static_id_fkey
    FOREIGN KEY (merchant_id, static_id) REFERENCES static_payids (merchant_id, id);
ALTER TABLE portal_sessions ADD CONSTRAINT portal_sessions_user_id_fkey
    FOREIGN KEY (merchant_id, user_id) REFERENCES users (merchant_id, id);
ALTER TABLE portal_invites ADD CONSTRAINT portal_invites_user_id_fkey
    FOREIGN KEY (merchant_id, user_id) REFERENCES users (merchant_id, id);
ALTER TABLE settlement_configs ADD CONSTRAINT settlement_configs_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE settlement_configs ADD CONSTRAINT settlement_configs_treasury_account_id_fkey
    FOREIGN KEY (merchant_id, treasury_account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE settlements ADD CONSTRAINT settlements_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE settlements ADD CONSTRAINT settlements_balance_id_fkey
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records (merchant_id, id);
ALTER TABLE settlements ADD CONSTRAINT settlements_treasury_account_id_fkey
    FOREIGN KEY (merchant_id, treasury_account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE gateway_payments ADD CONSTRAINT gateway_payments_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE gateway_payments ADD CONSTRAINT gateway_payments_balance_id_fkey
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records (merchant_id, id);
ALTER TABLE treasury_submissions ADD CONSTRAINT treasury_submissions_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE transfers ADD CONSTRAINT transfers_from_account_id_fkey
    FOREIGN KEY (merchant_id, from_account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE transfers ADD CONSTRAINT transfers_to_account_id_fkey
    FOREIGN KEY (merchant_id, to_account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE transfers ADD CONSTRAINT transfers_uuid_fkey
    FOREIGN KEY (merchant_id, uuid) REFERENCES balance_records (merchant_id, id);
ALTER TABLE reports ADD CONSTRAINT reports_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE payin_links ADD CONSTRAINT payin_links_account_id_fkey
    FOREIGN KEY (merchant_id, account_id) REFERENCES accounts (merchant_id, id);
ALTER TABLE payin_links ADD CONSTRAINT payin_links_balance_id_fkey
    FOREIGN KEY (merchant_id, balance_id) REFERENCES balance_records (merchant_id, id);

-- The webhook dispatcher leases, records and releases events by id alone,
-- across merchants (one claim serves every endpoint): this index serves it
-- now that the primary key leads with merchant_id.
CREATE INDEX webhook_events_id ON webhook_events (id);
