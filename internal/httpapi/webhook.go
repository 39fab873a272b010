package httpapi

import (
	"context"
	"net/http"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/webhook"
)

type deliveryList struct {
	Records []webhook.Delivery `json:"records" doc:"Events about the record, newest first, each with its attempts."`
}

type resendRequest struct {
	ID string `json:"id" doc:"The event id (webhook-id) to send again."`
}

func (a *API) webhookRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/webhooks/deliveries", auth: authKeys,
			summary: "The webhook events about a record and every delivery attempt.",
			description: "Every time in the log is on the merchant's clock (its sandbox test clock; in production the real clock), so no attempt shows before its event: " +
				"created_at is when the event was written, each attempt's at when it started and delivered_at when it was delivered, each stamped with the merchant's time as it happened. " +
				"Retries run on the real clock, whatever the test clock does: next_attempt_at, kept on the real clock for them, is shown on the merchant's clock as it runs now, " +
				"so moving the test clock forward moves it too while the retry still waits its real delay.",
			params:   []param{{name: "uuid", typ: "string", required: true, doc: "The record's uuid (or id)."}},
			response: deliveryList{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "uuid", a.deliveries, func(list []webhook.Delivery) any { return deliveryList{Records: list} })},
		{method: "POST", path: "/v2/webhooks/deliveries/resend", auth: authKeys,
			summary:     "Send a webhook event again.",
			description: "Queues another attempt now, whatever the event's state; if it fails, the retry schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h) starts over. The webhook-id stays the same.",
			body:        resendRequest{}, response: webhook.Delivery{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.resendDelivery},
		{method: "POST", path: "/v2/webhooks/test", auth: authKeys,
			summary:     "Send a ping event to a receiver, through the same path as every event.",
			description: "The ping is signed, retried and logged like any event (X-Event-Type: ping). Production accepts only https endpoints on public addresses.",
			body:        webhook.Target{}, response: webhook.Delivery{}, status: 201, codes: []string{fault.CodeNotFound}, handle: a.testWebhook},
	}
}

// deliveries is the webhook log of the caller's record uuid.
func (a *API) deliveries(ctx context.Context, p merchant.Principal, uuid string) ([]webhook.Delivery, error) {
	return a.Webhooks.Deliveries(ctx, p.MerchantID, uuid)
}

func (a *API) resendDelivery(w http.ResponseWriter, r *http.Request) {
	var req resendRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	if req.ID == "" || len(req.ID) > 64 {
		a.fail(w, r, fault.Field("id", "is required"))
		return
	}
	expect(r, http.StatusOK, nil)
	d, err := inTx(a, r, func(tx *store.Tx) (webhook.Delivery, error) {
		return a.Webhooks.Resend(r.Context(), tx, principal(r).MerchantID, req.ID)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, d)
}

func (a *API) testWebhook(w http.ResponseWriter, r *http.Request) {
	var req webhook.Target
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusCreated, nil)
	p := principal(r)
	d, err := inTx(a, r, func(tx *store.Tx) (webhook.Delivery, error) {
		return a.Webhooks.SendPing(r.Context(), tx, p.MerchantID, req, p.ClockOffset)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusCreated, d)
}
