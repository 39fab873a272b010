package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// Citus. On a PostgreSQL database with the citus extension, Apply
// distributes the schema after applying the migrations:
//
//   - merchants becomes a reference table (a copy on every node), which every
//     merchant's rows point at;
//   - every table with a merchant_id column is distributed by it, colocated
//     with accounts, so that one merchant's rows of every table live in one
//     shard group and a transaction of one merchant is routed to one node;
//   - global_keys is distributed by its key (store's keys.go), so a lookup of a
//     key is routed to the key's shard;
//   - the rest stays on the coordinator: secrets, the throttles' counters,
//     schema_migrations, and the operator records of CONTRACT §25, which
//     belong to no merchant (migration 0027: rails, rail_methods,
//     bank_files, operator_audit; read and written by operator commands
//     and a rail's cut-off, never by a merchant's transaction, so that a
//     payout's hand-over to a rail stays on its merchant's node; migration
//     0028: inbox_files, inbox_entries and bank_exceptions, written by the
//     inbox readers beside the merchant's rows an entry changes; migration
//     0029: feeds and feed_entries, the bank feeds' and their entries';
//     migration 0034: portal_oidc_logins, single sign-on's sign-ins under
//     way, before any merchant is known).
//     (The job queue did until migration 0023 keyed it by merchant: a
//     transaction that enqueued a job committed in two phases.)
//
// It runs again after every Apply and does only what is not done. On
// plain PostgreSQL and SQLite nothing happens.
//
// A table a later migration adds must be distributed inside that migration,
// before it has any foreign key: on a distributed schema Citus takes a new
// table pointing at merchants in as a coordinator-only table at once (which
// it cannot distribute afterwards if the table has an identity column,
// citus#7888), and refuses outright one pointing at another merchant-owned
// table. So such a migration creates its tables without foreign keys, then
// has a line "-- payd: distribute", then adds the keys. On Citus the
// migration runs distribute at that line, in the migration's transaction;
// elsewhere the line is a comment. TestLaterMigrationsSuitCitus checks both.

// citusAnchor is the table every merchant-owned table is colocated with.
const citusAnchor = "accounts"

// DistributeMarker is the line of a migration at which, on Citus, the
// tables it has created so far are distributed.
const DistributeMarker = "-- payd: distribute"

// PrepareCitus sets what a transaction that changes distributed tables
// needs (a migration's, or a copy's into Citus): a foreign key to a
// reference table makes Citus run the whole transaction over one
// connection per node, and the guard triggers of the append-only tables
// (audit_log, reports) only refuse changes, which is safe on shards.
func PrepareCitus(ctx context.Context, tx *sql.Tx) error {
	for _, set := range []string{`SET LOCAL citus.multi_shard_modify_mode TO sequential`, `SET LOCAL citus.enable_unsafe_triggers TO on`} {
		if _, err := tx.ExecContext(ctx, set); err != nil {
			return err
		}
	}
	return nil
}

// distribute distributes what is not yet distributed, in tx (see PrepareCitus).
func distribute(ctx context.Context, tx *sql.Tx) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("distribute on citus: %w", err)
		}
	}()
	// placed are the tables of the current schema already distributed or
	// made reference tables (not those Citus only keeps on the coordinator).
	placedNames, err := queryColumn[string](ctx, tx, `SELECT c.relname FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
		WHERE c.relnamespace = current_schema()::regnamespace AND (p.partmethod <> 'n' OR p.repmodel = 't')`)
	if err != nil {
		return err
	}
	placed := map[string]bool{}
	for _, n := range placedNames {
		placed[n] = true
	}

	// Foreign keys to merchants are set aside while it becomes a reference
	// table and the tables that point at it are distributed (Citus cannot
	// distribute a table pointing at a local one), then made again.
	type fk struct{ table, name, def string }
	var toMerchants []fk
	if !placed["merchants"] {
		toMerchants, err = queryAll(ctx, tx, `SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k
			JOIN pg_class c ON c.oid = k.conrelid
			WHERE k.contype = 'f' AND k.confrelid = to_regclass('merchants') ORDER BY 1, 2`, func(r *sql.Rows, f *fk) error { return r.Scan(&f.table, &f.name, &f.def) })
		if err != nil {
			return err
		}
		for _, f := range toMerchants {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %q DROP CONSTRAINT %q`, f.table, f.name)); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `SELECT create_reference_table('merchants')`); err != nil {
			return err
		}
	}

	owned, err := merchantTables(ctx, tx)
	if err != nil {
		return err
	}
	for _, t := range owned {
		if placed[t] {
			continue
		}
		colocate := citusAnchor
		if t == citusAnchor {
			colocate = "none"
		}
		if _, err := tx.ExecContext(ctx, `SELECT create_distributed_table($1, 'merchant_id', colocate_with => $2)`, t, colocate); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		placed[t] = true
	}
	if !placed["global_keys"] {
		if _, err := tx.ExecContext(ctx, `SELECT create_distributed_table('global_keys', 'key', colocate_with => 'none')`); err != nil {
			return fmt.Errorf("global_keys: %w", err)
		}
		placed["global_keys"] = true
	}
	for _, f := range toMerchants {
		// A table that stays on the coordinator (the job queue before
		// migration 0023) is added to Citus's metadata first, as a local
		// table of its own: one that Citus adds by itself through its key
		// is locked by every later change of a foreign key anywhere in the
		// database, which deadlocks changes of two schemas (or two tests)
		// at once.
		if !placed[f.table] {
			if _, err := tx.ExecContext(ctx, `SELECT citus_add_local_table_to_metadata($1)`, f.table); err != nil {
				return fmt.Errorf("%s: %w", f.table, err)
			}
			placed[f.table] = true
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %q ADD CONSTRAINT %q %s`, f.table, f.name, f.def)); err != nil {
			return err
		}
	}
	return nil
}

// merchantTables lists the tables of the current schema that have a
// merchant_id column (global_keys aside), parents before the tables whose
// foreign keys point at them, as Citus distributes them.
func merchantTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	tables, err := queryColumn[string](ctx, tx, `SELECT table_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_name = 'merchant_id' AND table_name <> 'global_keys' ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	type edge struct{ child, parent string }
	edges, err := queryAll(ctx, tx, `SELECT c.relname, p.relname FROM pg_constraint k
		JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
		WHERE k.contype = 'f' AND c.relnamespace = current_schema()::regnamespace AND k.conrelid <> k.confrelid`, func(r *sql.Rows, e *edge) error { return r.Scan(&e.child, &e.parent) })
	if err != nil {
		return nil, err
	}
	parents := map[string][]string{}
	for _, e := range edges {
		parents[e.child] = append(parents[e.child], e.parent)
	}
	return ParentsFirst(append([]string{citusAnchor}, tables...), parents), nil
}

// ParentsFirst orders tables so that each comes after the tables its
// foreign keys point at (parents, by table; those not in tables are left
// out), otherwise in the order given: the order Citus distributes tables
// in, and payd copy fills them in.
func ParentsFirst(tables []string, parents map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(t string)
	visit = func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		for _, p := range parents[t] {
			if slices.Contains(tables, p) {
				visit(p)
			}
		}
		out = append(out, t)
	}
	for _, t := range tables {
		visit(t)
	}
	return out
}

// distributeAll distributes, in a transaction of its own, what the
// migrations left undistributed: the whole schema, the first time.
func distributeAll(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("distribute on citus: %w", err)
	}
	if err := PrepareCitus(ctx, tx); err != nil {
		tx.Rollback()
		return fmt.Errorf("distribute on citus: %w", err)
	}
	if err := distribute(ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("distribute on citus: %w", err)
	}
	return nil
}

// queryAll runs query and returns one T per row, each filled by scan.
func queryAll[T any](ctx context.Context, tx *sql.Tx, query string, scan func(*sql.Rows, *T) error, args ...any) ([]T, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// queryColumn runs a query of one column and returns its values.
func queryColumn[T any](ctx context.Context, tx *sql.Tx, query string, args ...any) ([]T, error) {
	return queryAll(ctx, tx, query, func(r *sql.Rows, v *T) error { return r.Scan(v) }, args...)
}
