-- Verification messages record their delivery, so that the outbox is also
-- the delivery log of the configured sender (CONTRACT §8). status is pending
-- (handed to the mail server, no attempt finished yet), sent (accepted by the
-- mail server at sent_at, or kept in the sandbox outbox, which is then the
-- delivery) or failed (the last attempt failed; error says why, and a retry
-- may still be due). Messages written before this migration were kept in the
-- outbox only, which was their delivery: they count as sent when written.
ALTER TABLE verification_messages ADD COLUMN subject TEXT NOT NULL DEFAULT '';
ALTER TABLE verification_messages ADD COLUMN status TEXT NOT NULL DEFAULT 'sent';
ALTER TABLE verification_messages ADD COLUMN sent_at BIGINT;
ALTER TABLE verification_messages ADD COLUMN error TEXT;
UPDATE verification_messages SET sent_at = created_at;
UPDATE verification_messages SET subject = 'Verify your identity' WHERE channel = 'email';
