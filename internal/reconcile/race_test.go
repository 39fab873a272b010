package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"payd/internal/fault"
	"payd/internal/reconcile"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

// TestRacingMatchesTakeARecordOnce: eight people match eight lines to one
// settlement at once; exactly one match is made, the others are 409 and
// change nothing (a record is matched by one line at most).
func TestRacingMatchesTakeARecordOnce(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, sts := settled(t, e, "10")
		var lines []string
		for i := range 8 {
			lines = append(lines, fmt.Sprintf("2026-03-02,%d.00,NOTHING%d,x", 20+i, i))
		}
		st, _, err := upload(t, e, p, reconcile.Upload{File: csvOf(lines...), AccountNumber: "12345678"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := e.Reconcile.Get(ctx, p, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(d.Lines))
		for i, l := range d.Lines {
			wg.Go(func() {
				_, errs[i] = store.Do(ctx, e.DB, func(tx *store.Tx) (reconcile.Line, error) {
					return e.Reconcile.Match(ctx, tx, p, reconcile.Actor{Label: fmt.Sprint("user", i)},
						reconcile.MatchRequest{LineID: l.ID, Type: reconcile.SettlementRecord, UUID: sts[0].UUID})
				})
			})
		}
		wg.Wait()
		var won, lost int
		var others []string
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case fault.StatusOf(err) == 409:
				lost++
			default:
				others = append(others, err.Error())
			}
		}
		if won != 1 || lost != 7 {
			t.Errorf("%d matches made, %d refused 409, others %s; want 1 and 7", won, lost, strings.Join(others, "; "))
		}
		if d, _ := e.Reconcile.Get(ctx, p, st.ID); d.Matched != 1 || d.Unmatched != 7 || len(d.Missing) != 0 {
			t.Errorf("after the race: matched %d unmatched %d missing %d", d.Matched, d.Unmatched, len(d.Missing))
		}
	})
}
