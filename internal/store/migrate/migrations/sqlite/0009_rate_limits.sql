-- Request limits shared by every payd process on the database.
-- auth_failures counts failed authentications per key (a client address, or
-- a client address and the app-id it presented) in a window that opens at
-- the key's first failure.
CREATE TABLE auth_failures (
    key           TEXT PRIMARY KEY,
    window_start  BIGINT NOT NULL,
    failures      INTEGER NOT NULL
);

-- rate_buckets are the merchants' token buckets (writes and reads), in
-- thousandths of a request; processes lease tokens from them in chunks.
CREATE TABLE rate_buckets (
    merchant_id   TEXT NOT NULL REFERENCES merchants(id),
    kind          TEXT NOT NULL,
    tokens_milli  BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, kind)
);

-- A merchant's limits in requests per second; 0 is the deployment's default.
ALTER TABLE merchants ADD COLUMN write_rate INTEGER NOT NULL DEFAULT 0;
ALTER TABLE merchants ADD COLUMN read_rate INTEGER NOT NULL DEFAULT 0;
