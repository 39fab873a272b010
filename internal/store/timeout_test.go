package store_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/store/wirefault"
)

// TestTimeoutBoundsAStuckWire: with the wire to PostgreSQL stuck (the
// proxy holds its traffic, with no reset), a one-row read and a write
// transaction each fail once Options.Timeout has passed, with an error
// IsUnavailable reports, instead of waiting for TCP to give up; once the
// wire carries again, both work.
func TestTimeoutBoundsAStuckWire(t *testing.T) {
	t.Parallel()
	direct := storetest.PostgresDSN(t)
	proxy, via := wirefault.Around(t, direct)
	const timeout = 500 * time.Millisecond
	db, err := store.Open(context.Background(), via, store.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	read := func() error {
		var n int
		return db.Read().QueryRowContext(ctx, `SELECT $1::int + 1`, 1).Scan(&n)
	}
	write := func() error {
		return db.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TEMPORARY TABLE IF NOT EXISTS stuck (id int)`)
			return err
		})
	}
	for name, do := range map[string]func() error{"a one-row read": read, "a write transaction": write} {
		if err := do(); err != nil {
			t.Fatalf("%s before the wire is stuck: %v", name, err)
		}
		proxy.Blackhole(true)
		began := time.Now()
		done := make(chan error, 1)
		go func() { done <- do() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * timeout):
			proxy.Blackhole(false)
			t.Fatalf("%s on a stuck wire is still waiting after %s (the timeout is %s)", name, 20*timeout, timeout)
		}
		took := time.Since(began)
		proxy.Blackhole(false)
		proxy.Reset()
		if !store.IsUnavailable(err) || took > 10*timeout {
			t.Errorf("%s on a stuck wire: %v after %s, want an unavailable error after about %s", name, err, took.Round(time.Millisecond), timeout)
		}
		if err := do(); err != nil {
			t.Errorf("%s once the wire carries again: %v", name, err)
		}
	}
}
