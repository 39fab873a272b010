-- Portal sign-in by OpenID Connect (CONTRACT §23). A sign-in under way is
-- kept here from /portal/oidc/login to its callback, so that any payd
-- process finishes it and its state is good once: the callback deletes the
-- row it uses. Keyed by the state's hash; no merchant is known before the
-- identity provider answers, so it belongs to none (on Citus it stays on
-- the coordinator, as portal_login_failures does).
CREATE TABLE portal_oidc_logins (
    state_hash     TEXT PRIMARY KEY,
    nonce          TEXT NOT NULL,
    code_verifier  TEXT NOT NULL,
    expires_at     BIGINT NOT NULL
);

-- The role a session signed in by OpenID Connect was given from the
-- identity provider's groups; empty: the user's own role.
ALTER TABLE portal_sessions ADD COLUMN role TEXT NOT NULL DEFAULT '';
