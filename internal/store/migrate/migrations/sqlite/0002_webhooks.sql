-- Webhook outbox: an event row is written in the same transaction as the
-- state change that causes it; the dispatcher delivers it afterwards.
CREATE TABLE webhook_events (
    id                    TEXT PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    event_type            TEXT NOT NULL,
    record_uuid           TEXT NOT NULL,
    endpoint_url          TEXT NOT NULL,
    authorization_header  TEXT NOT NULL,
    body                  BLOB NOT NULL,
    status                TEXT NOT NULL,
    attempts              INTEGER NOT NULL DEFAULT 0,
    next_attempt_at       BIGINT,
    locked_until          BIGINT,
    last_error            TEXT,
    created_at            BIGINT NOT NULL,
    delivered_at          BIGINT,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX webhook_events_due ON webhook_events (status, next_attempt_at);
CREATE INDEX webhook_events_record ON webhook_events (merchant_id, record_uuid, created_at);

CREATE TABLE webhook_attempts (
    id           INTEGER PRIMARY KEY,
    event_id     TEXT NOT NULL REFERENCES webhook_events(id),
    attempt      INTEGER NOT NULL,
    started_at   BIGINT NOT NULL,
    status_code  INTEGER,
    latency_ms   BIGINT NOT NULL,
    error        TEXT
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, attempt);
