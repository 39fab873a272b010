-- The job queue is keyed by merchant (issue 19): a job lives with the rows
-- of the merchant whose clock it runs on (merchant_id; '' for a job of no
-- merchant, which runs on the real clock), so that on Citus it is
-- distributed with them. merchant_id takes the place of clock_of, and has
-- no foreign key, since '' names no merchant. Waiting jobs are carried over
-- with new ids.
CREATE TABLE job_queue (
    id            INTEGER PRIMARY KEY,
    merchant_id   TEXT NOT NULL,
    kind          TEXT NOT NULL,
    payload       TEXT NOT NULL,
    run_at        BIGINT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    state         TEXT NOT NULL,
    locked_until  BIGINT,
    last_error    TEXT,
    unique_key    TEXT,
    created_at    BIGINT NOT NULL,
    CONSTRAINT job_queue_unique_key UNIQUE (merchant_id, unique_key)
);
INSERT INTO job_queue (merchant_id, kind, payload, run_at, attempts, max_attempts, state, locked_until, last_error, unique_key, created_at)
    SELECT COALESCE(clock_of, ''), kind, payload, run_at, attempts, max_attempts, state, locked_until, last_error, unique_key, created_at
    FROM jobs ORDER BY id;
DROP TABLE jobs;
ALTER TABLE job_queue RENAME TO jobs;
CREATE INDEX jobs_due ON jobs (state, run_at);
-- Not (merchant_id, state, run_at): with those, PostgreSQL took it over the
-- primary key for a claim of one job by its id (merchant_id and state both
-- matched), and read every waiting job of the merchant (10 ms each with 20,000).
CREATE INDEX jobs_merchant ON jobs (merchant_id, run_at);
