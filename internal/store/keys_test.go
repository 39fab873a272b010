package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

func TestGlobalKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, m := range []string{"M1", "M2"} {
			err := db.Exec(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at) VALUES ($1, $1, 'AU', 'UTC', 's', 0)`, m)
				return err
			})
			if err != nil {
				t.Fatalf("merchant %s: %v", m, err)
			}
		}
		claim := func(kind store.KeyKind, key, merchantID string) bool {
			t.Helper()
			ok, err := store.Do(ctx, db, func(tx *store.Tx) (bool, error) { return store.ClaimKey(ctx, tx, kind, key, merchantID) })
			if err != nil {
				t.Fatalf("ClaimKey(%s, %s, %s): %v", kind, key, merchantID, err)
			}
			return ok
		}
		owner := func(kind store.KeyKind, key string) string {
			t.Helper()
			m, err := store.KeyOwner(ctx, db.Read(), kind, key)
			if errors.Is(err, sql.ErrNoRows) {
				return ""
			}
			if err != nil {
				t.Fatalf("KeyOwner(%s, %s): %v", kind, key, err)
			}
			return m
		}

		if !claim(store.KeyPayin, "K1", "M1") {
			t.Fatal("a free key was refused")
		}
		if claim(store.KeyPayin, "K1", "M2") || claim(store.KeyPayin, "K1", "M1") {
			t.Error("a held key was claimed again")
		}
		if !claim(store.KeyPayinLink, "K1", "M2") {
			t.Error("the same key of another kind was refused")
		}
		if got := owner(store.KeyPayin, "K1"); got != "M1" {
			t.Errorf("owner of payin K1 = %q, want M1", got)
		}
		if got := owner(store.KeyPayinLink, "K1"); got != "M2" {
			t.Errorf("owner of payin_link K1 = %q, want M2", got)
		}
		if got := owner(store.KeyPayin, "K2"); got != "" {
			t.Errorf("owner of an unclaimed key = %q, want none", got)
		}

		// Another merchant cannot release the key; its holder can, and it is free again.
		release := func(merchantID string) {
			t.Helper()
			if err := db.Exec(ctx, func(tx *store.Tx) error { return store.ReleaseKey(ctx, tx, store.KeyPayin, "K1", merchantID) }); err != nil {
				t.Fatalf("ReleaseKey: %v", err)
			}
		}
		release("M2")
		if got := owner(store.KeyPayin, "K1"); got != "M1" {
			t.Errorf("after another merchant's release, owner = %q, want M1", got)
		}
		release("M1")
		if got := owner(store.KeyPayin, "K1"); got != "" {
			t.Errorf("after release, owner = %q, want none", got)
		}

		// ClaimNew draws again on a taken key and keeps the transaction usable.
		claim(store.KeyPayin, "TAKEN", "M2")
		draws := []string{"TAKEN", "FREE"}
		got, err := store.Do(ctx, db, func(tx *store.Tx) (string, error) {
			return store.ClaimNew(ctx, tx, store.KeyPayin, "M1", func() string { d := draws[0]; draws = draws[1:]; return d })
		})
		if err != nil || got != "FREE" || owner(store.KeyPayin, "FREE") != "M1" || owner(store.KeyPayin, "TAKEN") != "M2" {
			t.Errorf("ClaimNew = %q, %v; want FREE held by M1, TAKEN still M2's", got, err)
		}

		// ClaimRandom's draw of a taken key runs the transaction again, with
		// a new draw, on PostgreSQL (where its claim is sent); on SQLite it
		// draws again at once.
		draws = []string{"TAKEN", "FREE2"}
		runs := 0
		got, err = store.Do(ctx, db, func(tx *store.Tx) (string, error) {
			runs++
			key, err := store.ClaimRandom(ctx, tx, store.KeyPayin, "M1", func() string { d := draws[0]; draws = draws[1:]; return d })
			if err != nil {
				return "", err
			}
			// The key's row, as a caller writes it next.
			_, err = tx.ExecContext(ctx, `SELECT 1`)
			return key, err
		})
		wantRuns := 1
		if db.Dialect() == store.Postgres {
			wantRuns = 2
		}
		if err != nil || got != "FREE2" || runs != wantRuns || owner(store.KeyPayin, "FREE2") != "M1" || owner(store.KeyPayin, "TAKEN") != "M2" {
			t.Errorf("ClaimRandom = %q, %v after %d runs; want FREE2 held by M1 after %d, TAKEN still M2's", got, err, runs, wantRuns)
		}

		// A sent claim of a held key fails its transaction, which writes nothing.
		err = db.Exec(ctx, func(tx *store.Tx) error {
			if err := store.SendKey(ctx, tx, store.KeyPayin, "NEW", "M1"); err != nil {
				return err
			}
			return store.SendKey(ctx, tx, store.KeyPayin, "FREE", "M2")
		})
		if err == nil || owner(store.KeyPayin, "NEW") != "" {
			t.Errorf("a sent claim of a held key: err %v, NEW held by %q; want an error and nothing written", err, owner(store.KeyPayin, "NEW"))
		}
	})
}
