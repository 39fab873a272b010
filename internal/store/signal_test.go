package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

// heard is a Listener's calls, on channels.
type heard struct {
	payloads  chan string
	connected chan struct{}
	broke     chan error
}

func newHeard() *heard {
	return &heard{payloads: make(chan string, 16), connected: make(chan struct{}, 16), broke: make(chan error, 16)}
}

func (h *heard) listener() store.Listener {
	return store.Listener{
		Heard:     func(p string) { h.payloads <- p },
		Connected: func() { h.connected <- struct{}{} },
		Broke:     func(err error) { h.broke <- err },
	}
}

// within bounds each wait of these tests: a failure, not a measure.
const within = 15 * time.Second

func (h *heard) awaitConnected(t *testing.T) {
	t.Helper()
	select {
	case <-h.connected:
	case <-time.After(within):
		t.Fatal("the listener did not connect")
	}
}

func (h *heard) await(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-h.payloads:
			if got != w {
				t.Fatalf("heard %q, want %q", got, w)
			}
		case <-time.After(within):
			t.Fatalf("did not hear %q", w)
		}
	}
}

// TestSignalHeard: what one process signals (DB.Signal) a listener of
// another process on the same PostgreSQL database hears, in order; when its
// connection is killed the listener says why, connects again (Connected
// again) and hears what is signalled after; a listener of another schema
// of the same database hears nothing of it; Listen returns once its
// context ends.
func TestSignalHeard(t *testing.T) {
	t.Parallel()
	targets := storetest.PostgresTargets()
	if len(targets) == 0 {
		t.Skip(storetest.DSNEnv + " not set: only PostgreSQL has other processes to signal")
	}
	for _, target := range targets {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			dsn := target.DSN(t)
			sender, listener, stranger := storetest.Open(t, dsn), storetest.Open(t, dsn), storetest.Open(t, target.DSN(t))
			channel := "t" + strings.ToLower(store.RandomID(10))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h, other := newHeard(), newHeard()
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				listener.Listen(ctx, channel, h.listener())
			}()
			go stranger.Listen(ctx, channel, other.listener())
			h.awaitConnected(t)
			other.awaitConnected(t)
			if err := sender.Signal(ctx, channel, []string{"one", "two"}); err != nil {
				t.Fatal(err)
			}
			h.await(t, "one", "two")

			// Kill the listening connection: found by the LISTEN it ran last.
			var killed int
			if err := sender.Read().QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE query LIKE 'LISTEN "' || $1 || '_%'`, channel).Scan(&killed); err != nil || killed != 2 {
				t.Fatalf("terminated %d listeners (want this one and the stranger's): %v", killed, err)
			}
			for _, b := range []chan error{h.broke, other.broke} {
				select {
				case err := <-b:
					if err == nil {
						t.Error("Broke heard no error")
					}
				case <-time.After(within):
					t.Fatal("the listener did not say its connection broke")
				}
			}
			h.awaitConnected(t)
			other.awaitConnected(t)
			if err := sender.Signal(ctx, channel, []string{"three"}); err != nil {
				t.Fatal(err)
			}
			h.await(t, "three")
			// The stranger's schema is another deployment: a signal to it
			// after ours, heard first, shows it heard none of ours.
			if err := stranger.Signal(ctx, channel, []string{"its own"}); err != nil {
				t.Fatal(err)
			}
			other.await(t, "its own")
			cancel()
			select {
			case <-ended:
			case <-time.After(within):
				t.Fatal("Listen did not return once its context ended")
			}
		})
	}
}

// TestSignalBounds: a payload over MaxSignalPayload bytes or more than
// MaxSignals payloads is refused on every database; on SQLite a signal is
// sent to no one and Listen only waits for its context.
func TestSignalBounds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		tests := []struct {
			name     string
			payloads []string
		}{
			{"a payload too long", []string{strings.Repeat("x", store.MaxSignalPayload+1)}},
			{"too many payloads", make([]string, store.MaxSignals+1)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := db.Signal(ctx, "bounds", tt.payloads); err == nil {
					t.Error("Signal took it")
				}
			})
		}
		if err := db.Signal(ctx, "bounds", []string{strings.Repeat("x", store.MaxSignalPayload)}); err != nil {
			t.Errorf("a payload of MaxSignalPayload bytes: %v", err)
		}
	})
}

// TestListenSQLite: on SQLite Listen hears nothing and returns once its
// context ends.
func TestListenSQLite(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.SQLiteDSN(t))
	ctx, cancel := context.WithCancel(context.Background())
	h := newHeard()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		db.Listen(ctx, "nothing", h.listener())
	}()
	if err := db.Signal(ctx, "nothing", []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-ended:
	case <-time.After(within):
		t.Fatal("Listen did not return once its context ended")
	}
	select {
	case p := <-h.payloads:
		t.Errorf("heard %q on SQLite", p)
	default:
	}
}
