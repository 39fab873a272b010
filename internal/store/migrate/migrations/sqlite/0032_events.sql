-- Events and webhook endpoints (CONTRACT §21, §25). Every merchant's rows:
-- keyed by merchant_id.

-- Every event payd emits (but ping), as GET /v2/events lists it: id is the
-- webhook-id of each of its deliveries, body the record as its detail
-- endpoint returned it when the event was written, currency its
-- currency member ('' when it has none). created_at is on the merchant's
-- clock (what from_date and to_date filter), written_at on the real clock
-- (what retention prunes by). seq is the event's place in the merchant's
-- stream (GET /v2/events/stream): null when written, numbered after its
-- commit by the stream's sequencer under the merchant's event_streams row,
-- so that a number seen means every smaller one is committed.
CREATE TABLE events (
    merchant_id  TEXT NOT NULL REFERENCES merchants (id),
    id           TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    record_uuid  TEXT NOT NULL,
    currency     TEXT NOT NULL,
    body         BLOB NOT NULL,
    created_at   BIGINT NOT NULL,
    written_at   BIGINT NOT NULL,
    seq          BIGINT,
    CONSTRAINT events_key PRIMARY KEY (merchant_id, id)
);
CREATE INDEX events_list ON events (merchant_id, created_at, id);
CREATE UNIQUE INDEX events_seq ON events (merchant_id, seq) WHERE seq IS NOT NULL;
CREATE INDEX events_unsequenced ON events (merchant_id, written_at) WHERE seq IS NULL;
CREATE INDEX events_age ON events (merchant_id, written_at);

-- The last stream number each merchant's sequencer gave.
CREATE TABLE event_streams (
    merchant_id  TEXT NOT NULL REFERENCES merchants (id),
    last_seq     BIGINT NOT NULL,
    CONSTRAINT event_streams_key PRIMARY KEY (merchant_id)
);

-- A merchant's webhook endpoints: every event whose type one of its
-- patterns matches is delivered there too, signed with its own secret (and
-- previous_secret beside it until previous_secret_expires_at, after a
-- rotation). failing_since is when its deliveries started failing (null
-- after one is delivered): three days of it, or a 410, disables it.
CREATE TABLE webhook_endpoints (
    merchant_id                 TEXT NOT NULL REFERENCES merchants (id),
    id                          TEXT NOT NULL,
    url                         TEXT NOT NULL,
    description                 TEXT NOT NULL,
    enabled_events              TEXT NOT NULL,
    status                      TEXT NOT NULL,
    disabled_reason             TEXT,
    secret                      TEXT NOT NULL,
    previous_secret             TEXT,
    previous_secret_expires_at  BIGINT,
    failing_since               BIGINT,
    created_at                  BIGINT NOT NULL,
    updated_at                  BIGINT NOT NULL,
    CONSTRAINT webhook_endpoints_key PRIMARY KEY (merchant_id, id)
);

-- An endpoint's enabled_events, one pattern a row, for the fan-out's
-- INSERT ... SELECT: an exact type (wildcard 0) or a prefix ending in a
-- star (wildcard 1, prefix the part before the star; '*' alone has '').
CREATE TABLE webhook_endpoint_events (
    merchant_id  TEXT NOT NULL,
    endpoint_id  TEXT NOT NULL,
    pattern      TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    wildcard     INTEGER NOT NULL,
    CONSTRAINT webhook_endpoint_events_key PRIMARY KEY (merchant_id, endpoint_id, pattern),
    FOREIGN KEY (merchant_id, endpoint_id) REFERENCES webhook_endpoints (merchant_id, id) ON DELETE CASCADE
);

-- A delivery to a webhook endpoint names it (endpoint_id) and the event it
-- delivers (event_id, its webhook-id); a delivery to a record's own
-- endpoint_url has neither, and its own id is the event's.
ALTER TABLE webhook_events ADD COLUMN event_id TEXT;
ALTER TABLE webhook_events ADD COLUMN endpoint_id TEXT;
CREATE INDEX webhook_events_endpoint ON webhook_events (merchant_id, endpoint_id, created_at) WHERE endpoint_id IS NOT NULL;
