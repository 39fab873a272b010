-- The merchant portal (CONTRACT §13). Sessions are kept here, so that any
-- payd process serves any signed-in user; the cookie holds a token whose
-- hash is the key.
CREATE TABLE portal_sessions (
    token_hash    TEXT PRIMARY KEY,
    merchant_id   TEXT NOT NULL REFERENCES merchants(id),
    user_id       TEXT NOT NULL REFERENCES users(id),
    csrf_token    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);

-- Failed sign-ins per email (known or not, so that both are answered alike).
CREATE TABLE portal_login_failures (
    email         TEXT PRIMARY KEY,
    failures      INTEGER NOT NULL,
    locked_until  BIGINT,
    updated_at    BIGINT NOT NULL
);

ALTER TABLE users ADD COLUMN disabled_at BIGINT;
ALTER TABLE users ADD COLUMN totp_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN totp_pending TEXT NOT NULL DEFAULT '';
-- The 30-second step of the last code accepted: a code is good once (RFC 6238 §5.2).
ALTER TABLE users ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;

-- One-time links for invited users to set their password.
CREATE TABLE portal_invites (
    token_hash   TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    user_id      TEXT NOT NULL REFERENCES users(id),
    expires_at   BIGINT NOT NULL,
    used_at      BIGINT
);

-- The audit log: append-only (the code has no update or delete of it).
CREATE TABLE audit_log (
    id           BIGSERIAL PRIMARY KEY,
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    actor        TEXT NOT NULL,
    action       TEXT NOT NULL,
    subject      TEXT NOT NULL,
    detail       TEXT NOT NULL,
    client       TEXT NOT NULL,
    at           BIGINT NOT NULL
);
CREATE INDEX audit_log_list ON audit_log (merchant_id, at);

-- Append-only in the database too: an UPDATE or DELETE of a row fails.
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
