package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"payd/internal/fault"
	"payd/internal/idempotency"
	"payd/internal/merchant"
	"payd/internal/store"
)

// encodeJSON is the one encoder of response bodies, so a stored idempotent
// response and the live one are byte for byte the same.
func encodeJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeJSON writes v with status.
func (a *API) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := encodeJSON(v)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeBody(w, status, body)
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// inTx opens the one transaction that carries a write request's effect and
// runs fn in it, under the request's idempotency claim if it has one
// (idempotency.Do), so the effect and the stored answer are one atomic
// fact (CONTRACT §3).
func inTx[T any](a *API, r *http.Request, fn func(tx *store.Tx) (T, error)) (T, error) {
	ctx := r.Context()
	claim := claimOf(r)
	return idempotency.Do(ctx, a.DB, claim, fn)
}

// serviceCall is the shape of most write endpoints' service methods: they
// write in the transaction they are given.
type serviceCall[Req, Res any] func(ctx context.Context, tx *store.Tx, p merchant.Principal, req Req) (Res, error)

// jsonHandler is a whole write endpoint of that shape: decode the JSON body,
// call the service as the caller in the request's transaction (inTx), and
// answer status with the result.
func jsonHandler[Req, Res any](a *API, status int, call serviceCall[Req, Res]) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := decode(r, &req); err != nil {
			a.fail(w, r, err)
			return
		}
		expect(r, status, nil)
		res, err := inTx(a, r, func(tx *store.Tx) (Res, error) {
			return call(r.Context(), tx, principal(r), req)
		})
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if body := claimOf(r).Body(); body != nil {
			// What the transaction stored for the key, rendered from res.
			writeBody(w, status, body)
			return
		}
		a.writeJSON(w, r, status, res)
	}
}

// lookupCall is a read of what one query parameter names (a record's
// uuid, a method's name), as the caller p.
type lookupCall[Res any] func(ctx context.Context, p merchant.Principal, key string) (Res, error)

// lookupHandler is a whole read endpoint of that shape: read the required
// query parameter param, call the service with it as the caller, and answer
// 200 with the result, in the envelope wrap puts it in (nil: as it is).
func lookupHandler[Res any](a *API, param string, call lookupCall[Res], wrap func(Res) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := newQuery(r)
		key := q.required(param)
		if err := q.err(); err != nil {
			a.fail(w, r, err)
			return
		}
		res, err := call(r.Context(), principal(r), key)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if wrap == nil {
			a.writeJSON(w, r, http.StatusOK, res)
			return
		}
		a.writeJSON(w, r, http.StatusOK, wrap(res))
	}
}

// errorBody is the one error envelope of the API (CONTRACT §3).
type errorBody struct {
	Errors errorDetail `json:"errors"`
}

type errorDetail struct {
	Code      string            `json:"code" doc:"Stable UPPER_SNAKE error code."`
	Message   string            `json:"message"`
	Fields    map[string]string `json:"fields,omitempty" doc:"For validation errors: each wrong member's JSON name and what is wrong with it."`
	RequestID string            `json:"request_id,omitempty" doc:"Present on 500 answers, to quote when reporting the problem."`
}

// refusal is the answer to a refusal e: its status and error envelope.
func refusal(e *fault.Error) (int, []byte) {
	body, _ := encodeJSON(errorBody{Errors: errorDetail{Code: e.Code, Message: e.Message, Fields: e.Fields}})
	return fault.Status(e.Kind), body
}

// fail answers err in the errors envelope. An error that is not a domain
// error is a bug or an outage: it is logged and answered 500 INTERNAL with the
// request id, never with its text.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, idempotency.ErrReplay) {
		if c := claimOf(r); c != nil && c.Replayed != nil {
			w.Header().Set("Idempotent-Replayed", "true")
			writeBody(w, c.Replayed.Status, c.Replayed.Body)
			return
		}
	}
	if e, ok := fault.As(err); ok {
		status, body := refusal(e)
		writeBody(w, status, body)
		return
	}
	id := requestID(r.Context())
	if store.IsUnavailable(err) && r.Context().Err() == nil {
		// The database is out of reach (restarting, or failing over to its
		// standby): nothing was committed, and the request may be retried.
		a.log.Warn("database unavailable", "request_id", id, "method", r.Method, "path", r.URL.Path, slog.Any("err", err))
		w.Header().Set("Retry-After", "1")
		body, _ := encodeJSON(errorBody{Errors: errorDetail{Code: fault.CodeUnavailable,
			Message: "the database is unavailable for a moment; retry the request (with the same Idempotency-Key)", RequestID: id}})
		writeBody(w, http.StatusServiceUnavailable, body)
		return
	}
	if r.Context().Err() != nil {
		// The client went away or the server is stopping; nobody reads this answer.
		a.log.Info("request cancelled", "request_id", id, "err", err)
	} else {
		a.log.Error("internal error", "request_id", id, "method", r.Method, "path", r.URL.Path, slog.Any("err", err))
	}
	body, _ := encodeJSON(errorBody{Errors: errorDetail{Code: fault.CodeInternal,
		Message: "internal error; quote request id " + id + " when reporting it", RequestID: id}})
	writeBody(w, http.StatusInternalServerError, body)
}
