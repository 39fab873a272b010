package store

import (
	"context"
	"fmt"
)

// churnTables are the tables whose rows are updated or deleted many times a
// second under load (the job queue, the webhook outbox, the ledger's
// buckets). On PostgreSQL each change leaves a dead row version that only
// VACUUM reclaims, and the planner knows their sizes only once ANALYZE has
// run: without autovacuum they grow without bound and their statements slow
// down with them.
var churnTables = []string{"jobs", "webhook_events", "ledger_buckets", "rate_buckets"}

// VacuumAdvice says what keeps PostgreSQL's autovacuum from looking after
// payd's busiest tables (autovacuum off on the server, or disabled on one
// of them), or "" when nothing does. SQLite needs none: a deleted row's
// page is reused by the next insert.
func (db *DB) VacuumAdvice(ctx context.Context) (string, error) {
	if db.dialect != Postgres {
		return "", nil
	}
	// One read: the server's switch, and the busy tables whose own switch is off.
	var on, off string
	err := db.write.QueryRowContext(ctx, `SELECT current_setting('autovacuum'),
		COALESCE((SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_class c
			WHERE c.oid = ANY($1::regclass[]) AND 'autovacuum_enabled=false' = ANY(c.reloptions)), '')`, churnTables).Scan(&on, &off)
	if err != nil {
		return "", fmt.Errorf("read autovacuum settings: %w", err)
	}
	if on != "on" {
		return "autovacuum is off on the PostgreSQL server: payd's job queue, webhook outbox and ledger buckets " +
			"will keep every dead row version and slow down; turn it on (autovacuum = on) or VACUUM ANALYZE them regularly", nil
	}
	if off != "" {
		return fmt.Sprintf("autovacuum is disabled on [%s] (autovacuum_enabled = false): these tables will keep every dead row version and slow down; "+
			"ALTER TABLE … RESET (autovacuum_enabled)", off), nil
	}
	return "", nil
}
