-- A posting that took a merchant bucket below zero because its movement
-- allowed it (a chargeback on an emptied account, say) says so, so that
-- ledger verify can tell it from a break.
ALTER TABLE postings ADD COLUMN overdraft BOOLEAN NOT NULL DEFAULT FALSE;
