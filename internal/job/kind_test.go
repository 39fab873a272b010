package job_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// recordRef is a payload as the domain packages' jobs have them: the
// merchant and the record a job works on.
type recordRef struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}

var jobRecord = job.NewKind[recordRef]("test.record")

// TestRegisterTwicePanics: a second handler for a kind is refused at start,
// not left to replace the first.
func TestRegisterTwicePanics(t *testing.T) {
	t.Parallel()
	q, _ := newQueue(nil, clock.NewManual(t0))
	work := func(context.Context, *store.Tx, job.Job, recordRef) error { return nil }
	job.Register(q, jobRecord, work)
	defer func() {
		r := recover()
		if got, want := fmt.Sprint(r), `job: kind "test.record" registered twice`; got != want {
			t.Errorf("second Register panicked with %q, want %q", got, want)
		}
	}()
	job.Register(q, job.NewKind[int]("test.record"), func(context.Context, *store.Tx, job.Job, int) error { return nil })
	t.Error("second Register of a kind did not panic")
}

// TestNewKindNeedsAName: a kind without a name cannot be made.
func TestNewKindNeedsAName(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil {
			t.Error("NewKind(\"\") did not panic")
		}
	}()
	job.NewKind[recordRef]("")
}

// TestWrapNeedsAHandler: Wrap of a kind without a handler panics, and
// otherwise runs the wrapper around the registered work.
func TestWrapNeedsAHandler(t *testing.T) {
	t.Parallel()
	q, _ := newQueue(nil, clock.NewManual(t0))
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("Wrap of an unregistered kind did not panic")
			}
		}()
		q.Wrap("test.none", func(h job.Handler) job.Handler { return h })
	}()
	var got []string
	job.Register(q, jobRecord, func(_ context.Context, _ *store.Tx, _ job.Job, r recordRef) error {
		got = append(got, "work "+r.UUID)
		return nil
	})
	q.Wrap(jobRecord.String(), func(h job.Handler) job.Handler {
		return func(ctx context.Context, tx *store.Tx, j job.Job) error {
			got = append(got, "before")
			return h(ctx, tx, j)
		}
	})
	h, _ := q.Handler(jobRecord.String())
	if err := h(context.Background(), nil, job.Job{Kind: jobRecord.String(), Payload: json.RawMessage(`{"uuid":"u1"}`)}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"before", "work u1"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ran %v, want %v", got, want)
	}
}

// TestTypedPayloads: a typed handler is given the payload it was enqueued
// with, and the jobs table stores that payload's JSON, as the queue stored
// every payload before it was typed (json.Marshal of the value).
func TestTypedPayloads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant := newMerchant(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		var got []recordRef
		job.Register(q, jobRecord, func(_ context.Context, _ *store.Tx, j job.Job, r recordRef) error {
			got = append(got, r)
			return nil
		})
		want := recordRef{MerchantID: merchant, UUID: "pay_1"}
		if err := db.Exec(ctx, func(tx *store.Tx) error {
			return job.Enqueue(ctx, tx, q, jobRecord, want, job.Options{ClockOf: merchant})
		}); err != nil {
			t.Fatal(err)
		}
		stored := count(t, db, `SELECT count(*) FROM jobs WHERE kind = 'test.record' AND payload = $1`, `{"merchant_id":"`+merchant+`","uuid":"pay_1"}`)
		if stored != 1 {
			t.Errorf("%d jobs store the payload as json.Marshal writes it, want 1", stored)
		}
		if ran, err := q.RunOne(ctx, merchant); !ran || err != nil {
			t.Fatalf("RunOne = %v, %v; want true, nil", ran, err)
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("handler got %+v, want [%+v]", got, want)
		}
	})
}

// TestPayloadOfThePreviousVersionRuns: jobs the untyped queue enqueued (its
// Enqueue stored json.Marshal of any value, and each handler unmarshalled
// j.Payload itself) are run by the typed handlers after an upgrade: the
// rows below are what it wrote for the kinds' payloads.
func TestPayloadOfThePreviousVersionRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload string
		want    recordRef
	}{
		{"a record's reference", `{"merchant_id":"%s","uuid":"pay_1"}`, recordRef{UUID: "pay_1"}},
		{"members in another order", `{"uuid":"pay_2","merchant_id":"%s"}`, recordRef{UUID: "pay_2"}},
		{"a member the payload no longer has", `{"merchant_id":"%s","uuid":"pay_3","attempt":2}`, recordRef{UUID: "pay_3"}},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant := newMerchant(t, db)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q, _ := newQueue(db, clock.NewManual(t0))
				var got []recordRef
				job.Register(q, jobRecord, func(_ context.Context, _ *store.Tx, _ job.Job, r recordRef) error {
					got = append(got, r)
					return nil
				})
				exec(t, db, `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, unique_key, created_at)
					VALUES ('test.record', $1, $2, $3, 25, 'available', NULL, $3)`, merchant, fmt.Sprintf(tt.payload, merchant), t0.UnixMilli())
				if ran, err := q.RunOne(ctx, merchant); !ran || err != nil {
					t.Fatalf("RunOne = %v, %v; want true, nil", ran, err)
				}
				want := tt.want
				want.MerchantID = merchant
				if len(got) != 1 || got[0] != want {
					t.Errorf("handler got %+v, want [%+v]", got, want)
				}
			})
		}
	})
}

// TestPayloadThatDoesNotDecodeFails: a stored payload that is not the
// kind's type fails the run as a handler's error does (the attempt counted,
// the reason kept), and the handler never sees it.
func TestPayloadThatDoesNotDecodeFails(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q, obs := newQueue(db, clock.NewManual(t0))
		runs := 0
		job.Register(q, job.NewKind[recordRef]("test.bad"), func(context.Context, *store.Tx, job.Job, recordRef) error {
			runs++
			return nil
		})
		exec(t, db, `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, unique_key, created_at)
			VALUES ('test.bad', '', '{"uuid":7}', $1, 25, 'available', NULL, $1)`, t0.UnixMilli())
		if ran, err := q.RunOne(ctx, ""); !ran || err != nil {
			t.Fatalf("RunOne = %v, %v; want true, nil", ran, err)
		}
		got := jobOf(t, db, "test.bad")
		if got.State != job.Available || got.Attempts != 1 || !regexp.MustCompile(`^job \d+ \(test.bad\) payload: json: cannot unmarshal`).MatchString(got.LastError) {
			t.Errorf("job = %+v, want available after 1 attempt with a payload error", got)
		}
		if runs != 0 {
			t.Errorf("handler ran %d times, want 0", runs)
		}
		if o := obs.list(); len(o) != 1 || o[0] != "test.bad retry" {
			t.Errorf("observed %v, want [test.bad retry]", o)
		}
	})
}
