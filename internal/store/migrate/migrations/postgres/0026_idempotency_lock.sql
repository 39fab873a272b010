-- A keyed request's claim (internal/idempotency): the key's advisory lock,
-- taken in the effect's transaction, or an error (SQLSTATE PD409) that
-- aborts it when a transaction of another process holds the key. As an
-- error it needs no answer read before the COMMIT: the transaction fails,
-- and payd answers 409.
CREATE FUNCTION idempotency_lock(key BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(key) THEN
        RAISE EXCEPTION 'idempotency key in use' USING ERRCODE = 'PD409';
    END IF;
END $$;
