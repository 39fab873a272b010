-- Least privilege for API keys (CONTRACT §23): an app's scopes (a comma
-- list of RESOURCE:read / RESOURCE:write, or * for everything its account
-- can do: every app made before this has *), when it stops being accepted
-- (Unix ms on the deployment's clock; NULL never), and the client
-- addresses it is accepted from (a comma list of CIDR prefixes; empty from
-- anywhere).
ALTER TABLE apps ADD COLUMN scopes TEXT NOT NULL DEFAULT '*';
ALTER TABLE apps ADD COLUMN expires_at BIGINT;
ALTER TABLE apps ADD COLUMN allowed_ips TEXT NOT NULL DEFAULT '';
