package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

const base36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

func TestRandomIDShape(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 64).Draw(t, "n")
		id := store.RandomID(n)
		if len(id) != n {
			t.Fatalf("len(RandomID(%d)) = %d, want %d", n, len(id), n)
		}
		if i := strings.IndexFunc(id, func(r rune) bool { return !strings.ContainsRune(base36, r) }); i >= 0 {
			t.Fatalf("RandomID(%d) = %q: %q is not upper-case base-36", n, id, id[i])
		}
	})
}

// TestRandomIDUsesWholeAlphabet draws enough characters that a missing or
// badly skewed character (an off-by-one in the rejection bound) shows.
func TestRandomIDUsesWholeAlphabet(t *testing.T) {
	t.Parallel()
	const draws = 36 * 2000
	counts := map[rune]int{}
	for _, r := range store.RandomID(draws) {
		counts[r]++
	}
	for _, r := range base36 {
		t.Run(string(r), func(t *testing.T) {
			// Expected 2000 each; a fair draw is within ±20 % with overwhelming probability.
			if got := counts[r]; got < 1600 || got > 2400 {
				t.Errorf("%q drawn %d times in %d, want about 2000", r, got, draws)
			}
		})
	}
}

func TestRandomDigits(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		got := store.RandomDigits(n)
		if len(got) != n {
			t.Fatalf("len(RandomDigits(%d)) = %d, want %d", n, len(got), n)
		}
		if got[0] == '0' {
			t.Fatalf("RandomDigits(%d) = %q starts with 0", n, got)
		}
		if strings.Trim(got, "0123456789") != "" {
			t.Fatalf("RandomDigits(%d) = %q has a non-digit", n, got)
		}
	})
}

// TestRandomDigitsFirstDigit checks the first digit over many one-digit draws:
// never 0, and every one of 1–9 turns up.
func TestRandomDigitsFirstDigit(t *testing.T) {
	t.Parallel()
	seen := map[byte]int{}
	for range 9000 {
		seen[store.RandomDigits(1)[0]]++
	}
	tests := []struct {
		digit   byte
		atLeast int
		atMost  int
	}{
		{'0', 0, 0},
		{'1', 700, 1300}, {'2', 700, 1300}, {'3', 700, 1300},
		{'4', 700, 1300}, {'5', 700, 1300}, {'6', 700, 1300},
		{'7', 700, 1300}, {'8', 700, 1300}, {'9', 700, 1300},
	}
	for _, tt := range tests {
		t.Run(string(tt.digit), func(t *testing.T) {
			if got := seen[tt.digit]; got < tt.atLeast || got > tt.atMost {
				t.Errorf("first digit %q drawn %d times in 9000, want %d..%d", tt.digit, got, tt.atLeast, tt.atMost)
			}
		})
	}
}

type rowsAffected int64

func (n rowsAffected) RowsAffected() (int64, error) { return int64(n), nil }

type brokenResult struct{}

func (brokenResult) RowsAffected() (int64, error) { return 0, errors.New("no count") }

func TestOneRow(t *testing.T) {
	t.Parallel()
	execErr := errors.New("exec failed")
	tests := []struct {
		name    string
		res     interface{ RowsAffected() (int64, error) }
		err     error
		want    bool
		wantErr bool
	}{
		{"one row", rowsAffected(1), nil, true, false},
		{"no row", rowsAffected(0), nil, false, false},
		{"two rows", rowsAffected(2), nil, false, false},
		{"exec error", nil, execErr, false, true},
		{"count error", brokenResult{}, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.OneRow(tt.res, tt.err)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("OneRow = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// createIDTable makes a table whose primary key the id tests fill; ids must
// be six characters long, so a longer one is an error other than a collision.
func createIDTable(t *testing.T, db *store.DB) {
	t.Helper()
	err := db.Exec(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), `CREATE TABLE ids_test (id TEXT PRIMARY KEY CHECK (length(id) = 6))`)
		return err
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
}

// insertID is the insert InsertUnique expects: ON CONFLICT DO NOTHING, OneRow.
func insertID(ctx context.Context, tx *store.Tx) func(id string) (bool, error) {
	return func(id string) (bool, error) {
		return store.OneRow(tx.ExecContext(ctx, `INSERT INTO ids_test (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, id))
	}
}

func countIDs(t *testing.T, db *store.DB, id string) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(`SELECT count(*) FROM ids_test WHERE id = $1`, id).Scan(&n); err != nil {
		t.Fatalf("count ids: %v", err)
	}
	return n
}

func TestInsertUnique(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createIDTable(t, db)
		err := db.Exec(ctx, func(tx *store.Tx) error {
			for i := 1; i <= 6; i++ {
				if _, err := tx.ExecContext(ctx, `INSERT INTO ids_test (id) VALUES ($1)`, fmt.Sprintf("TAKEN%d", i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
		taken := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("TAKEN%d", i%6+1)
			}
			return out
		}
		tests := []struct {
			name      string
			ids       []string
			wantID    string
			wantCalls int
			wantErr   bool
			wantRows  int // rows holding the returned id after the commit
		}{
			{"free at once", []string{"FREE01"}, "FREE01", 1, false, 1},
			{"one collision", []string{"TAKEN1", "FREE02"}, "FREE02", 2, false, 1},
			{"collisions up to the bound", append(taken(store.MaxIDTries-1), "FREE03"), "FREE03", store.MaxIDTries, false, 1},
			{"gives up after the bound", append(taken(store.MaxIDTries), "FREE04"), "", store.MaxIDTries, true, 0},
			{"never stops on its own", taken(3 * store.MaxIDTries), "", store.MaxIDTries, true, 0},
			{"other insert error is not retried", []string{"TOO_LONG", "FREE05"}, "", 1, true, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				calls := 0
				next := func() string {
					id := tt.ids[min(calls, len(tt.ids)-1)]
					calls++
					return id
				}
				// Do commits what was written, so a collision must not have
				// aborted the transaction (PostgreSQL aborts on a raised error).
				got, err := store.Do(ctx, db, func(tx *store.Tx) (string, error) {
					return store.InsertUnique(ctx, next, insertID(ctx, tx))
				})
				if got != tt.wantID || calls != tt.wantCalls || (err != nil) != tt.wantErr {
					t.Errorf("InsertUnique = %q, %v after %d ids; want %q, error %v after %d",
						got, err, calls, tt.wantID, tt.wantErr, tt.wantCalls)
				}
				if n := countIDs(t, db, got); n != tt.wantRows {
					t.Errorf("rows with id %q = %d, want %d", got, n, tt.wantRows)
				}
			})
		}
	})
}

func TestInsertWithID(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createIDTable(t, db)
		var lengths []int
		got, err := store.Do(ctx, db, func(tx *store.Tx) (string, error) {
			return store.InsertWithID(ctx, 6, func(id string) (bool, error) {
				lengths = append(lengths, len(id))
				return insertID(ctx, tx)(id)
			})
		})
		if err != nil {
			t.Fatalf("InsertWithID: %v", err)
		}
		if len(got) != 6 || strings.Trim(got, base36) != "" || fmt.Sprint(lengths) != "[6]" {
			t.Errorf("InsertWithID = %q after ids of lengths %v, want one 6-character base-36 id", got, lengths)
		}
		if n := countIDs(t, db, got); n != 1 {
			t.Errorf("rows with id %q = %d, want 1", got, n)
		}
	})
}
