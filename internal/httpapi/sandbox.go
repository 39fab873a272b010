package httpapi

import (
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
			description: "Give exactly one of advance_seconds and now. The answer comes after the work that became due (expiries, scheduled payouts, end-of-day settlements, report generation, reserve releases, clearing of deposits) has run. A test clock never moves back.",
			body:        clockRequest{}, response: clockView{}, status: 200, handle: a.advanceClock},
	}
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
	if (req.AdvanceSeconds == nil) == (!req.Now.Set) {
		a.fail(w, r, fault.Field("advance_seconds", "give exactly one of advance_seconds and now"))
		return
	}
	maxSeconds := int64(merchant.MaxClockAdvance / time.Second)
	if req.AdvanceSeconds != nil && (*req.AdvanceSeconds < 0 || *req.AdvanceSeconds > maxSeconds) {
		a.fail(w, r, fault.Field("advance_seconds", "must be from 0 to 315360000 (ten years); a test clock only moves forward"))
		return
	}
	p := principal(r)
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
	if err := a.Queue.RunDue(r.Context(), p.MerchantID); err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, clockView{Now: clock.Time{T: now}})
}
