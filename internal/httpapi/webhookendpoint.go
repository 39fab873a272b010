package httpapi

import (
	"context"
	"net/http"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/webhook"
)

type endpointList struct {
	Records []webhook.Endpoint `json:"records" doc:"The merchant's webhook endpoints, oldest first (never their secrets)."`
}

func (a *API) webhookEndpointRoutes() []route {
	nf := []string{fault.CodeNotFound}
	return []route{
		{method: "POST", path: "/v2/webhook_endpoints", auth: authKeys,
			summary: "Register a webhook endpoint: every event whose type enabled_events matches is sent there too.",
			description: "Events still go to each record's own endpoint_url as well. Deliveries here are signed (Standard Webhooks) with the endpoint's secret, shown only in this answer, and carry no Authorization; " +
				"they are retried on the same schedule. An endpoint that answers 410, or whose every delivery fails for 3 days, is disabled (event webhook_endpoint.disabled to the merchant's other endpoints). " +
				"Production refuses a url that is not https (422 url). At most 16 endpoints a merchant.",
			body: webhook.EndpointRequest{}, response: webhook.CreatedEndpoint{}, status: 201, codes: nf, handle: endpointHandler(a, http.StatusCreated, a.createEndpoint)},
		{method: "GET", path: "/v2/webhook_endpoints", auth: authKeys, summary: "The merchant's webhook endpoints.",
			response: endpointList{}, status: 200, codes: nf, handle: a.listEndpoints},
		{method: "POST", path: "/v2/webhook_endpoints/update", auth: authKeys, summary: "Change a webhook endpoint's url, enabled_events, description or status.",
			description: "Members left out stay as they are; status disabled stops its deliveries, enabled starts them again. Answers the endpoint.",
			body:        webhook.EndpointUpdate{}, response: webhook.Endpoint{}, status: 200, codes: nf, handle: endpointHandler(a, http.StatusOK, a.updateEndpoint)},
		{method: "POST", path: "/v2/webhook_endpoints/delete", auth: authKeys, summary: "Delete a webhook endpoint; its pending deliveries are not sent.",
			body: webhook.EndpointID{}, response: webhook.DeletedEndpoint{}, status: 200, codes: nf, handle: endpointHandler(a, http.StatusOK, a.deleteEndpoint)},
		{method: "POST", path: "/v2/webhook_endpoints/rotate_secret", auth: authKeys, summary: "Give a webhook endpoint a new signing secret.",
			description: "The old secret keeps signing beside the new one for 24 hours: webhook-signature then holds both signatures, space-separated.",
			body:        webhook.EndpointID{}, response: webhook.RotatedSecret{}, status: 200, codes: nf, handle: endpointHandler(a, http.StatusOK, a.rotateSecret)},
	}
}

// endpointHandler is jsonHandler for the endpoint writes.
func endpointHandler[Req, Res any](a *API, status int, call serviceCall[Req, Res]) http.HandlerFunc {
	return jsonHandler(a, status, call)
}

func (a *API) createEndpoint(ctx context.Context, tx *store.Tx, p merchant.Principal, req webhook.EndpointRequest) (webhook.CreatedEndpoint, error) {
	return a.Webhooks.CreateEndpoint(ctx, tx, p.MerchantID, req, a.merchantNow(p))
}

func (a *API) updateEndpoint(ctx context.Context, tx *store.Tx, p merchant.Principal, req webhook.EndpointUpdate) (webhook.Endpoint, error) {
	return a.Webhooks.UpdateEndpoint(ctx, tx, p.MerchantID, req, a.merchantNow(p))
}

func (a *API) deleteEndpoint(ctx context.Context, tx *store.Tx, p merchant.Principal, req webhook.EndpointID) (webhook.DeletedEndpoint, error) {
	return a.Webhooks.DeleteEndpoint(ctx, tx, p.MerchantID, req)
}

func (a *API) rotateSecret(ctx context.Context, tx *store.Tx, p merchant.Principal, req webhook.EndpointID) (webhook.RotatedSecret, error) {
	return a.Webhooks.RotateSecret(ctx, tx, p.MerchantID, req, p.ClockOffset)
}

// merchantNow is the caller's time: its sandbox test clock, in production the real one.
func (a *API) merchantNow(p merchant.Principal) time.Time {
	return a.Clock.Now().Add(p.ClockOffset).Truncate(time.Millisecond)
}

func (a *API) listEndpoints(w http.ResponseWriter, r *http.Request) {
	list, err := a.Webhooks.Endpoints(r.Context(), principal(r).MerchantID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, endpointList{Records: list})
}
