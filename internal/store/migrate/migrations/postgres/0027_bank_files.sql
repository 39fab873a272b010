-- The bank-file rail (CONTRACT §17, §25). Rails, bank files and the
-- operator audit log are operator records: they belong to no merchant and
-- are reached only by operator commands (and the rail's cut-offs); having
-- no merchant_id, on Citus they stay on the coordinator (store/migrate's
-- citus.go). The transfers waiting for a rail's cut-off stay in
-- rail_submissions, beside the merchant's other rows: handing a transfer to
-- a rail is then a statement on the merchant's own shard, and only a
-- cut-off, twice a day, reads across merchants.

-- A rail: the operator's account at a bank, the file format it takes, the
-- cut-offs (local times in the rail's zone) and where files go. A rail is
-- never deleted (its files name it): unset marks it, and its cut-offs and
-- deliveries go on while anything of it waits. cut_through is the instant
-- of the last cut-off made: the next follows it.
CREATE TABLE rails (
    name                TEXT PRIMARY KEY,
    format              TEXT NOT NULL,
    currency            TEXT NOT NULL,
    methods             TEXT NOT NULL,
    debtor_name         TEXT NOT NULL,
    debtor_account      TEXT NOT NULL,
    debtor_bsb          TEXT NOT NULL DEFAULT '',
    debtor_bic          TEXT NOT NULL DEFAULT '',
    debtor_bank_code    TEXT NOT NULL DEFAULT '',
    debtor_branch_code  TEXT NOT NULL DEFAULT '',
    debtor_account_type TEXT NOT NULL DEFAULT '',
    originator_id       TEXT NOT NULL DEFAULT '',
    bank_abbrev         TEXT NOT NULL DEFAULT '',
    cutoffs             TEXT NOT NULL,
    timezone            TEXT NOT NULL,
    outbox              TEXT NOT NULL,
    inbox               TEXT NOT NULL,
    sftp_key            TEXT NOT NULL DEFAULT '',
    sftp_known_hosts    TEXT NOT NULL DEFAULT '',
    cut_through         BIGINT NOT NULL,
    unset_at            BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
-- No two rails share an inbox (CONTRACT §25).
CREATE UNIQUE INDEX rails_inbox ON rails (inbox) WHERE unset_at IS NULL;

-- What each rail serves: each (currency, method) at most one rail, kept by
-- the key (CONTRACT §25). method is a payout method's code, settlements or
-- transfers.
CREATE TABLE rail_methods (
    currency TEXT NOT NULL,
    method   TEXT NOT NULL,
    rail     TEXT NOT NULL,
    PRIMARY KEY (currency, method)
);

-- A bank file: made at a cut-off with every transfer waiting for it, its
-- content kept whole and known by its SHA-256 (immutable but for its
-- delivery: written, then delivered). next_attempt_at is when its delivery
-- is next tried, and a delivering process's lease until then.
CREATE TABLE bank_files (
    name            TEXT PRIMARY KEY,
    rail            TEXT NOT NULL,
    day             TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    file_reference  TEXT NOT NULL,
    sha256          TEXT NOT NULL,
    size            BIGINT NOT NULL,
    count           INTEGER NOT NULL,
    total           BIGINT NOT NULL,
    currency        TEXT NOT NULL,
    content         BYTEA NOT NULL,
    status          TEXT NOT NULL,
    cutoff_at       BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_error      TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX bank_files_reference ON bank_files (file_reference);
CREATE UNIQUE INDEX bank_files_seq ON bank_files (rail, day, seq);
CREATE INDEX bank_files_undelivered ON bank_files (next_attempt_at) WHERE status = 'written';

-- The operator audit log: who ran which operator command that changes
-- something, when, and how it ended. Append-only.
CREATE TABLE operator_audit (
    id      BIGSERIAL PRIMARY KEY,
    at      BIGINT NOT NULL,
    actor   TEXT NOT NULL,
    command TEXT NOT NULL,
    args    TEXT NOT NULL,
    outcome TEXT NOT NULL
);
-- payd: distribute
-- (Nothing of the above is distributed: only the rail's keys follow.)
ALTER TABLE rail_methods ADD CONSTRAINT rail_methods_rail FOREIGN KEY (rail) REFERENCES rails (name);
ALTER TABLE bank_files ADD CONSTRAINT bank_files_rail FOREIGN KEY (rail) REFERENCES rails (name);
-- Append-only in the database too: an UPDATE or DELETE of a row fails.
CREATE FUNCTION operator_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'operator_audit is append-only';
END $$;
CREATE TRIGGER operator_audit_no_change BEFORE UPDATE OR DELETE ON operator_audit FOR EACH ROW EXECUTE FUNCTION operator_audit_append_only();

-- A transfer handed to a bank-file rail waits in rail_submissions for its
-- rail's next cut-off (waiting), with what its file needs (the recipient's
-- details in params, payee, description, remitter) and the real time it was
-- handed over; the cut-off names the file it went into (bank_file), once.
-- bank_reference is what the file and the bank's reports name it by
-- (claimed in global_keys, unique per deployment).
ALTER TABLE rail_submissions ADD COLUMN bank_reference TEXT;
ALTER TABLE rail_submissions ADD COLUMN bank_file TEXT;
ALTER TABLE rail_submissions ADD COLUMN waiting BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE rail_submissions ADD COLUMN handed_at BIGINT;
ALTER TABLE rail_submissions ADD COLUMN payee TEXT NOT NULL DEFAULT '';
ALTER TABLE rail_submissions ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE rail_submissions ADD COLUMN remitter TEXT NOT NULL DEFAULT '';
CREATE INDEX rail_submissions_waiting ON rail_submissions (rail, handed_at) WHERE waiting;
CREATE INDEX rail_submissions_file ON rail_submissions (bank_file) WHERE bank_file IS NOT NULL;
CREATE UNIQUE INDEX rail_submissions_reference ON rail_submissions (merchant_id, bank_reference);

-- Bank references on the records (CONTRACT §17, §25): a payout transaction's
-- from its hand-over to a rail, a settlement's and an external transfer's
-- from its creation; null before (and on records older than this).
ALTER TABLE payout_transactions ADD COLUMN bank_reference TEXT;
ALTER TABLE settlements ADD COLUMN bank_reference TEXT;
ALTER TABLE transfers ADD COLUMN bank_reference TEXT;
