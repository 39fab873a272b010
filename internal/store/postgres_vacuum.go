package store

// Vacuum and analyze: PostgreSQL's upkeep of its tables, which payd watches
// (VacuumAdvice) and stands in for when it is off (AnalyzeStale). This is
// the PostgreSQL driver's; SQLite's answers, nothing to do, are in
// sqlite.go.

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// churnTables are the tables whose rows are updated or deleted many times a
// second under load (the job queue, the webhook outbox, the ledger's
// buckets). On PostgreSQL each change leaves a dead row version that only
// VACUUM reclaims, and the planner knows their sizes only once ANALYZE has
// run: without autovacuum they grow without bound and their statements slow
// down with them.
var churnTables = []string{"jobs", "webhook_events", "ledger_buckets", "rate_buckets"}

// vacuumAdvice is VacuumAdvice on PostgreSQL.
func (d *postgresDriver) vacuumAdvice(ctx context.Context) (string, error) {
	// One read: the server's switch, and the busy tables whose own switch is off.
	var on, off string
	err := d.pool.QueryRowContext(ctx, `SELECT current_setting('autovacuum'),
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

// analyzeLock is the advisory lock one AnalyzeStale round holds, so that of
// several payd processes on one database only one analyzes at a time.
const analyzeLock = 7_261_913_001

// Autovacuum's default analyze threshold: a table is analyzed once more rows
// changed since its last analysis than analyzeBase and analyzeScale of its
// rows, and, once analyzed, not again before reanalyzeAfter (autovacuum's
// default naptime): every ANALYZE has the server plan the table's prepared
// statements anew, and the ledger's buckets change thousands of times a
// second.
const (
	analyzeBase    = 50
	analyzeScale   = 0.1
	reanalyzeAfter = time.Minute
)

// analyzeStale is AnalyzeStale on PostgreSQL.
func (d *postgresDriver) analyzeStale(ctx context.Context, db *DB) ([]string, error) {
	if d.citus {
		return nil, nil
	}
	var analyzed []string
	err := db.Exec(ctx, func(tx *Tx) error {
		analyzed = nil
		var mine bool
		if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(analyzeLock)).Scan(&mine); err != nil || !mine {
			return err
		}
		stale, err := QueryColumn[string](ctx, tx, `SELECT relname FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND n_mod_since_analyze > $1 + $2 * n_live_tup
				AND COALESCE(GREATEST(last_analyze, last_autoanalyze) < now() - make_interval(secs => $3), TRUE)
			ORDER BY relname`, analyzeBase, analyzeScale, reanalyzeAfter.Seconds())
		if err != nil {
			return err
		}
		for _, name := range stale {
			if _, err := tx.ExecContext(ctx, `ANALYZE `+pgx.Identifier{name}.Sanitize()); err != nil {
				return fmt.Errorf("analyze %s: %w", name, err)
			}
		}
		analyzed = stale
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("analyze payd's tables: %w", err)
	}
	return analyzed, nil
}

// selfAnalyze is SelfAnalyze on PostgreSQL.
func (d *postgresDriver) selfAnalyze(ctx context.Context) (bool, error) {
	if d.citus {
		return false, nil
	}
	var on string
	if err := d.pool.QueryRowContext(ctx, `SELECT current_setting('autovacuum')`).Scan(&on); err != nil {
		return false, fmt.Errorf("read autovacuum setting: %w", err)
	}
	return on != "on", nil
}
