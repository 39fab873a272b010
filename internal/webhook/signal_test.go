package webhook

import (
	"context"
	"sync"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestStreamsWokenBySignals: on PostgreSQL, a process whose listening
// connection connects wakes every stream it has open (what was signalled
// before may have been missed), and then an event another process commits
// wakes its merchant's stream by that process's signal. The streams poll
// once an hour, so only a wake delivers the events here.
func TestStreamsWokenBySignals(t *testing.T) {
	t.Parallel()
	targets := storetest.PostgresTargets()
	if len(targets) == 0 {
		t.Skip(storetest.DSNEnv + " not set: only PostgreSQL has other processes to hear")
	}
	for _, target := range targets {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			dsn := target.DSN(t)
			readerDB, writerDB := storetest.Open(t, dsn), storetest.Open(t, dsn)
			m := newMerchant(t, readerDB)
			reader, writer := newDispatcher(readerDB, Policy{}), newDispatcher(writerDB, Policy{})
			reader.StreamPoll = time.Hour
			ctx, cancel := context.WithCancel(context.Background())
			var signalling sync.WaitGroup
			t.Cleanup(func() {
				cancel()
				signalling.Wait()
			})
			s, err := reader.OpenStream(ctx, m, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			next := func(want string) {
				t.Helper()
				select {
				case <-s.wake: // taken here, so that the next wake is a new one
				case <-time.After(15 * time.Second):
					t.Fatal("the stream was not woken")
				}
				readCtx, stop := context.WithTimeout(ctx, 15*time.Second)
				defer stop()
				evs, ok, err := s.Next(readCtx, time.Hour)
				if err != nil || !ok || len(evs) != 1 || evs[0].ID != want {
					t.Fatalf("Next = %v, %v, %v; want the event %s", evs, ok, err, want)
				}
			}

			// The writer sends no signal yet (its sender is not running).
			missed := emit(t, writerDB, writer, m, store.RandomID(store.UUIDLen), Target{}, map[string]string{"n": "1"})
			if len(s.wake) != 0 {
				t.Fatal("the stream was woken before anything told of the event")
			}
			signalling.Go(func() { reader.runSignals(ctx) })
			next(missed)

			signalling.Go(func() { writer.runSignals(ctx) })
			told := emit(t, writerDB, writer, m, store.RandomID(store.UUIDLen), Target{}, map[string]string{"n": "2"})
			next(told)
		})
	}
}
