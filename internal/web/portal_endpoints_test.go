package web_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/webhook"
)

var endpointSecret = regexp.MustCompile(`id="endpoint-secret">(whsec_[^<]+)<`)

// TestPortalEndpoints: a developer adds a webhook endpoint (its secret
// shown on that answer only), rotates its secret (the new one shown once),
// disables and enables it, reads its delivery log and replays a day of
// events to it, each change audited; a viewer may not see the page, a
// form without the session's token is refused, and another merchant's
// endpoint is not found.
func TestPortalEndpoints(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		other := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		dev := signedIn(t, e, srv, m.MerchantID, "dev@shop.example", merchant.Developer)
		viewer := signedIn(t, e, srv, m.MerchantID, "viewer@shop.example", merchant.Viewer)
		stranger := signedIn(t, e, srv, other.MerchantID, "dev@elsewhere.example", merchant.Developer)
		const page = "/portal/developers/endpoints"
		if a := dev.do("GET", "/portal/developers", nil); !strings.Contains(a.body, `href="/portal/developers/endpoints"`) {
			t.Errorf("the developers page does not link the endpoints: %d", a.status)
		}

		created := dev.post(page, page, map[string]string{"url": "http://127.0.0.1:9/hooks", "enabled_events": "payin.*, payout.completed", "description": "shop"})
		a := dev.follow(created)
		m1 := endpointSecret.FindStringSubmatch(a.body)
		if a.status != http.StatusOK || m1 == nil {
			t.Fatalf("create: %d\n%.800s", a.status, a.body)
		}
		secret := m1[1]
		wantAudited(t, e, m.MerchantID, "POST", page)
		list, err := e.Webhooks.Endpoints(context.Background(), m.MerchantID)
		if err != nil || len(list) != 1 || strings.Join(list[0].EnabledEvents, ",") != "payin.*,payout.completed" {
			t.Fatalf("endpoints = %+v, %v", list, err)
		}
		id := list[0].ID
		if again := dev.follow(created); again.status != http.StatusOK || strings.Contains(html.UnescapeString(again.body), secret) || !strings.Contains(again.body, id) {
			t.Errorf("a reload shows the secret again, or not the endpoint: %d", again.status)
		}
		if list, _ := e.Webhooks.Endpoints(context.Background(), m.MerchantID); len(list) != 1 {
			t.Errorf("%d endpoints after one form and two views, want 1", len(list))
		}

		a = dev.follow(dev.post(page, page+"/"+id+"/rotate", nil))
		m2 := endpointSecret.FindStringSubmatch(a.body)
		if a.status != http.StatusOK || m2 == nil || m2[1] == secret {
			t.Fatalf("rotate: %d\n%.800s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", page+"/{id}/rotate")

		if a := dev.post(page, page+"/"+id+"/disable", nil); a.status != http.StatusSeeOther {
			t.Errorf("disable: %d", a.status)
		}
		wantAudited(t, e, m.MerchantID, "POST", page+"/{id}/disable")
		if body := dev.do("GET", page, nil).body; !strings.Contains(body, "disabled: disabled by the merchant") {
			t.Errorf("the page does not show the endpoint disabled:\n%.1500s", body)
		}
		if a := dev.post(page, page+"/"+id+"/enable", nil); a.status != http.StatusSeeOther {
			t.Errorf("enable: %d", a.status)
		}
		wantAudited(t, e, m.MerchantID, "POST", page+"/{id}/enable")

		ctx := context.Background()
		err = e.DB.Exec(ctx, func(tx *store.Tx) error {
			_, err := e.Webhooks.Emit(ctx, tx, webhook.Event{MerchantID: m.MerchantID, Type: "payin.received", RecordUUID: "PORTAL01",
				Payload: map[string]any{"uuid": "PORTAL01", "currency": "AUD"}, At: e.Clock.Now()})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if body := dev.do("GET", page+"/"+id, nil).body; !strings.Contains(body, "PORTAL01") || !strings.Contains(body, "pending") {
			t.Errorf("the delivery log lacks the event:\n%.1500s", body)
		}
		day := e.Clock.Now().In(merchant.Location("Australia/Sydney")).Format("2006-01-02")
		replayed := dev.post(page+"/"+id, page+"/"+id+"/replay", map[string]string{"from_date": day, "to_date": day, "types": "payin.*"})
		if a := dev.follow(replayed); a.status != http.StatusOK || !strings.Contains(a.body, "1 event queued again") {
			t.Errorf("replay: %d\n%.1500s", a.status, a.body)
		}
		if a := dev.follow(replayed); strings.Contains(a.body, "queued again") {
			t.Error("a reload of the endpoint's page says the replay again")
		}
		wantAudited(t, e, m.MerchantID, "POST", page+"/{id}/replay")
		if a := dev.post(page+"/"+id, page+"/"+id+"/replay", map[string]string{"from_date": "someday", "to_date": day}); a.status != http.StatusUnprocessableEntity {
			t.Errorf("a replay from someday: %d", a.status)
		}

		if a := viewer.do("GET", page, nil); a.status != http.StatusForbidden {
			t.Errorf("a viewer's GET: %d", a.status)
		}
		if a := dev.do("POST", page+"/"+id+"/disable", nil); a.status != http.StatusForbidden {
			t.Errorf("a form without its token: %d", a.status)
		}
		if a := stranger.post(page, page+"/"+id+"/rotate", nil); a.status != http.StatusNotFound {
			t.Errorf("another merchant's rotate: %d", a.status)
		}
		if a := stranger.do("GET", page+"/"+id, nil); a.status != http.StatusNotFound {
			t.Errorf("another merchant's delivery log: %d", a.status)
		}
	})
}
