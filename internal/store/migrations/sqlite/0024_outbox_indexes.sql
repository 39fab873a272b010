-- The outbox's due indexes hold only the events waiting to be delivered
-- (issue 17): an event leaves them when it is delivered or fails for good,
-- so they stay the size of the backlog however many events were ever sent,
-- and the update that ends an event writes no entry into them. Every
-- statement that reads them names status = 'pending' as a literal, which
-- is what lets it use them.
DROP INDEX webhook_events_due;
DROP INDEX webhook_events_endpoint_due;
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_events_endpoint_due ON webhook_events (endpoint_url, next_attempt_at) WHERE status = 'pending';
