// Package leaktest checks that a package's tests leave no goroutine running
// (go.uber.org/goleak). Its Main is the TestMain of the packages whose tests
// start job workers, webhook dispatchers, servers or databases, so a worker
// that outlives its stop, or a database a test forgot to close, fails the
// package's run. The goroutines it lets outlive the tests are listed here,
// each with the reason it may.
package leaktest

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"payd/internal/store/storetest"
)

// Main runs the package's tests, then fails the run if a goroutine other
// than those of Ignores outlives them.
func Main(m *testing.M) {
	goleak.VerifyTestMain(m, Ignores()...)
}

// Ignores are the goroutines that may outlive a package's tests.
func Ignores() []goleak.Option {
	opts := []goleak.Option{
		// A store lane's goroutine exits 2 s (store's laneIdle) after its
		// last group commit, also once its database is closed: it ends by
		// itself, but after the tests do. When store.DB.Close stops its
		// lanes, this ignore goes.
		goleak.IgnoreTopFunction("payd/internal/store.(*DB).runLane"),
	}
	if os.Getenv(storetest.DSNEnv) != "" || os.Getenv(storetest.CitusDSNEnv) != "" {
		// storetest's schema pool keeps one connection pool per server for
		// the whole test process (pool.go's admin), shared by every test and
		// never closed. Only with a DSN set: on SQLite alone, a database a
		// test leaves open is still found.
		opts = append(opts, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
			// pgx starts a background reader on a connection whose write
			// was slow (a loaded machine: pgconn's potential write-read
			// deadlock), and the reader waits in Read until the server
			// sends or the connection closes: on an idle connection of
			// that never-closed pool it outlives the tests (a CI run,
			// 2026-12-04, payin).
			goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgconn/internal/bgreader.(*BGReader).bgRead"))
	}
	return opts
}
