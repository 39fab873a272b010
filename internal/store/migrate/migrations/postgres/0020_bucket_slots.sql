-- Hot buckets (internal/ledger, Entry.Spread). On PostgreSQL a bucket is
-- slot 0, its principal row, and slots 1..4, which take the money of
-- entries spread by a key (a payin's receipt, its clearing, its reserve's
-- release), so that concurrent receipts into one account update different
-- rows. A bucket's balance is the sum of its slots; a debit that no single
-- slot is known to cover takes the whole bucket (every slot, in order) and
-- gathers it into slot 0. The number 4 is ledger.spreadSlots.
ALTER TABLE ledger_buckets ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_buckets DROP CONSTRAINT ledger_buckets_account_id_name_key;
ALTER TABLE ledger_buckets ADD CONSTRAINT ledger_buckets_account_name_slot UNIQUE (account_id, name, slot);
INSERT INTO ledger_buckets (merchant_id, account_id, name, currency, balance, allow_negative, slot)
SELECT b.merchant_id, b.account_id, b.name, b.currency, 0, b.allow_negative, s.slot
FROM ledger_buckets b CROSS JOIN generate_series(1, 4) AS s(slot)
WHERE b.slot = 0;
