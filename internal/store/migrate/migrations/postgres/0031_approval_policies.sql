-- Approval policies (CONTRACT §20, §25): the rules a merchant's admins set
-- on who must approve money leaving (a threshold policy per currency and
-- min_amount, a per-creator daily limit per currency, the beneficiary
-- approval switch), each changed only when a second admin approves the
-- change; the approvals each held payout or external transfer collects;
-- and on payouts, transfers and settlement configs what a policy decided.
-- The new tables are the merchant's rows: keyed by merchant_id, and on
-- Citus distributed by it (created without foreign keys, distributed at the
-- marker, then the keys).

-- A rule of kind threshold, daily_limit or beneficiary_approval. Its live
-- values (name, min_amount, approvals, roles; for a daily limit min_amount
-- is the limit, for the switch 1 is on) apply from version 1; a proposed
-- change (change create, update or delete, with the proposed values in
-- p_*) waits for a second admin. A deleted rule stays, with deleted true.
CREATE TABLE approval_policies (
    merchant_id       TEXT NOT NULL,
    id                TEXT NOT NULL,
    kind              TEXT NOT NULL,
    name              TEXT NOT NULL,
    currency          TEXT NOT NULL,
    min_amount        BIGINT NOT NULL,
    approvals         INTEGER NOT NULL,
    roles             TEXT NOT NULL,
    version           INTEGER NOT NULL,
    deleted           BOOLEAN NOT NULL DEFAULT FALSE,
    change            TEXT NOT NULL DEFAULT '',
    p_name            TEXT NOT NULL DEFAULT '',
    p_min_amount      BIGINT NOT NULL DEFAULT 0,
    p_approvals       INTEGER NOT NULL DEFAULT 0,
    p_roles           TEXT NOT NULL DEFAULT '',
    proposed_by       TEXT NOT NULL DEFAULT '',
    proposed_by_email TEXT NOT NULL DEFAULT '',
    proposed_at       BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    CONSTRAINT approval_policies_key PRIMARY KEY (merchant_id, id)
);
CREATE INDEX approval_policies_currency ON approval_policies (merchant_id, currency, kind);

-- One approval of a held payout or external transfer (subject_type payout
-- or transfer) by one user: the key makes the same user twice impossible.
CREATE TABLE approvals (
    merchant_id  TEXT NOT NULL,
    subject_type TEXT NOT NULL,
    subject_uuid TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    email        TEXT NOT NULL,
    role         TEXT NOT NULL,
    decided_at   BIGINT NOT NULL,
    CONSTRAINT approvals_key PRIMARY KEY (merchant_id, subject_type, subject_uuid, user_id)
);
-- payd: distribute
ALTER TABLE approval_policies ADD CONSTRAINT approval_policies_merchant FOREIGN KEY (merchant_id) REFERENCES merchants (id);
ALTER TABLE approvals ADD CONSTRAINT approvals_merchant FOREIGN KEY (merchant_id) REFERENCES merchants (id);

-- What a payout's evaluation decided: how many approvals it needs (0 on
-- payouts from before policies: one), by which roles ('' admin and
-- finance), and the policy's name and version that caught it.
ALTER TABLE payouts ADD COLUMN required_approvals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE payouts ADD COLUMN approval_roles TEXT NOT NULL DEFAULT '';
ALTER TABLE payouts ADD COLUMN policy_name TEXT;
ALTER TABLE payouts ADD COLUMN policy_version INTEGER;
CREATE INDEX payouts_creator ON payouts (merchant_id, created_by, created_at);

-- An external transfer a policy holds: its maker, and its approval as a
-- payout's.
ALTER TABLE transfers ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE transfers ADD COLUMN created_by_user TEXT NOT NULL DEFAULT '';
ALTER TABLE transfers ADD COLUMN approval_status TEXT NOT NULL DEFAULT '';
ALTER TABLE transfers ADD COLUMN required_approvals INTEGER NOT NULL DEFAULT 0;
ALTER TABLE transfers ADD COLUMN approval_roles TEXT NOT NULL DEFAULT '';
ALTER TABLE transfers ADD COLUMN policy_name TEXT;
ALTER TABLE transfers ADD COLUMN policy_version INTEGER;
ALTER TABLE transfers ADD COLUMN decided_by TEXT NOT NULL DEFAULT '';
ALTER TABLE transfers ADD COLUMN decided_at BIGINT;
ALTER TABLE transfers ADD COLUMN rejection_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE transfers ADD COLUMN hold_until BIGINT;

-- A beneficiary change waiting for approval (JSON: external_bank_account,
-- requested_by, requested_by_user, requested_at), or null.
ALTER TABLE settlement_configs ADD COLUMN pending_change TEXT;
