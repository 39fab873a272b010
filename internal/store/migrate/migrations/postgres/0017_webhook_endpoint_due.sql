-- The dispatcher claims an endpoint's due events by endpoint (an event was
-- just committed for it, or an attempt there just finished): this index
-- finds them without walking the backlog of other endpoints.
CREATE INDEX webhook_events_endpoint_due ON webhook_events (status, endpoint_url, next_attempt_at);
