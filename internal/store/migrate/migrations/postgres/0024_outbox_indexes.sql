-- The outbox's indexes, sized by what is still to do (issue 17).
-- * The due indexes hold only the events waiting to be delivered: an event
--   leaves them when it is delivered or fails for good, so they stay the
--   size of the backlog however many events were ever sent, and the update
--   that ends an event writes no entry into them. Every statement that
--   reads them names status = 'pending' as a literal, which is what lets it
--   use them.
-- * The dispatcher finds events by their primary key, merchant first, so
--   the index on id alone goes.
-- * A merchant's latest events (the portal's webhook log) are read newest
--   first from an index, instead of by sorting every event it ever had.
DROP INDEX webhook_events_due;
DROP INDEX webhook_events_endpoint_due;
DROP INDEX webhook_events_id;
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_events_endpoint_due ON webhook_events (endpoint_url, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_events_recent ON webhook_events (merchant_id, created_at, id);
