package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

type clockView struct {
	Now clock.Time `json:"now"`
}

type clockRequest struct {
	AdvanceSeconds *int64      `json:"advance_seconds,omitempty" doc:"Move the clock forward by this many seconds (0 runs what is due without moving)."`
	Now            clock.Input `json:"now,omitempty" doc:"Move the clock to this time, which must not be earlier than the clock's current time."`
}

func (a *API) sandboxRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/sandbox/clock", auth: authKeys, sandboxOnly: true,
			summary: "Sandbox: the calling merchant's test clock.", response: clockView{}, status: 200, handle: a.getClock},
		{method: "POST", path: "/v2/sandbox/clock", auth: authKeys, sandboxOnly: true,
			summary:     "Sandbox: move the merchant's test clock forward and run what became due.",
			description: "Give exactly one of advance_seconds and now. The answer comes after the work that became due (expiries, scheduled payouts, end-of-day settlements, report generation, reserve releases, clearing of deposits) has run. A test clock never moves back. Every request that starts after the answer, on any payd process of the deployment, runs on the new time (servers trust an authenticated app for 100 ms; the move waits that long before it answers). Should that work still be running after " + clockWorkLimitText + ", the answer is 503 CLOCK_WORK_RUNNING: the clock has moved, the workers carry on, and POST {\"advance_seconds\": 0} waits for the rest.",
			body:        clockRequest{}, response: clockView{}, status: 200, codes: []string{codeClockWorkRunning}, handle: a.advanceClock},
		{method: "POST", path: "/v2/sandbox/clock/reset", auth: authKeys, sandboxOnly: true,
			summary:     "Sandbox: start the merchant's test clock over at the real time.",
			description: "The one way a test clock goes back: it reads the deployment's real time again, so that a client that keeps wall-clock time works after the clock was moved. Records keep the times they were given; work scheduled on the moved clock (expiries, scheduled payouts, settlements) runs when the real time reaches it. An access token issued on the moved clock keeps what was left of its lifetime there, and one that had expired there stays expired. Takes no body.",
			response:    clockView{}, status: 200, handle: a.resetClock},
	}
}

// oneClockMove refuses a clock request that gives neither or both of
// advance_seconds and now (CONTRACT §3): a move says one thing. The refusal
// names both members, so that a client sees what it may send.
func oneClockMove(req clockRequest) error {
	advance, to := req.AdvanceSeconds != nil, req.Now.Set
	switch {
	case !advance && !to:
		return clockMoveRefused("neither was given",
			"is required unless now is given", "is required unless advance_seconds is given")
	case advance && to:
		return clockMoveRefused("not both",
			"must not be given with now", "must not be given with advance_seconds")
	}
	return nil
}

// clockMoveRefused is oneClockMove's 422: the rule, what broke it, and each
// member's problem.
func clockMoveRefused(broken, advanceProblem, nowProblem string) error {
	return &fault.Error{Kind: fault.Invalid, Code: fault.CodeValidation,
		Message: "give exactly one of advance_seconds (the seconds to move the clock forward) and now (the later time to move it to); " + broken,
		Fields:  map[string]string{"advance_seconds": advanceProblem, "now": nowProblem}}
}

func (a *API) getClock(w http.ResponseWriter, r *http.Request) {
	now, err := a.Merchants.Now(r.Context(), a.DB.Read(), principal(r).MerchantID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, clockView{Now: clock.Time{T: now}})
}

func (a *API) advanceClock(w http.ResponseWriter, r *http.Request) {
	var req clockRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	if err := oneClockMove(req); err != nil {
		a.fail(w, r, err)
		return
	}
	maxSeconds := int64(merchant.MaxClockAdvance / time.Second)
	if req.AdvanceSeconds != nil && (*req.AdvanceSeconds < 0 || *req.AdvanceSeconds > maxSeconds) {
		a.fail(w, r, fault.Field("advance_seconds", "must be from 0 to 315360000 (ten years); a test clock only moves forward"))
		return
	}
	p := principal(r)
	// The answer stored with the advance is the new time: a replay after
	// an answer that the due work's wait turned into a 503 gets it too.
	expect(r, http.StatusOK, func(now any) any { return clockView{Now: clock.Time{T: now.(time.Time)}} })
	now, err := inTx(a, r, func(tx *store.Tx) (time.Time, error) {
		now, err := a.Merchants.AdvanceClock(r.Context(), tx, p.MerchantID, func(now time.Time) (time.Time, error) {
			if req.AdvanceSeconds != nil {
				return now.Add(time.Duration(*req.AdvanceSeconds) * time.Second), nil
			}
			return req.Now.T, nil
		})
		if err != nil {
			return now, err
		}
		// Accounts opened by another process (payd merchant create) get
		// their report chains before the time they cover is run.
		return now, a.Reports.Ensure(r.Context(), tx, p.MerchantID)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.runDue(w, r, p.MerchantID, now); err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, clockView{Now: clock.Time{T: now}})
}

func (a *API) resetClock(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	now, err := inTx(a, r, func(tx *store.Tx) (time.Time, error) { return a.Merchants.ResetClock(r.Context(), tx, p.MerchantID) })
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, clockView{Now: clock.Time{T: now}})
}

// codeClockWorkRunning is the 503 of a clock advance whose due work
// outlasted ClockWorkLimit.
const codeClockWorkRunning = "CLOCK_WORK_RUNNING"

// DefaultClockWorkLimit is how long a sandbox clock advance waits for the
// work that became due: hundreds of scheduled payouts take a while, but a
// test should hear back rather than hang.
const DefaultClockWorkLimit = 10 * time.Minute

// clockWorkLimitText is DefaultClockWorkLimit in the documents' words.
var clockWorkLimitText = fmt.Sprintf("%d minutes", DefaultClockWorkLimit/time.Minute)

// runDue runs the merchant's due work for a clock advance, up to
// ClockWorkLimit, moving the answer's write deadline past the server's usual
// one to fit. Work still running at the limit is an error that says so: the
// clock has moved, and the workers carry on with what is left.
func (a *API) runDue(w http.ResponseWriter, r *http.Request, merchantID string, now time.Time) error {
	// A writer that cannot move its deadline (a test's recorder) has none.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(a.ClockWorkLimit + 30*time.Second))
	ctx, cancel := context.WithTimeout(r.Context(), a.ClockWorkLimit)
	defer cancel()
	err := a.Queue.RunDue(ctx, merchantID)
	if err != nil && ctx.Err() == context.DeadlineExceeded && r.Context().Err() == nil {
		w.Header().Set("Retry-After", "1")
		return fault.New(fault.Busy, codeClockWorkRunning, "the clock moved to %s, and the work that became due was still running after %s; "+
			"POST {\"advance_seconds\": 0} to wait for the rest", clock.Format(now), a.ClockWorkLimit)
	}
	return err
}
