package e2e

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"payd/internal/store/storetest"
)

// TestRequestsRouteToOneShard runs a merchant's everyday requests on Citus
// with every statement that spans more than one shard made an error
// (citus.multi_task_query_log_level): a request answers 2xx only if each of
// its statements went to one shard (one merchant's, or one key's in
// global_keys). The dispatcher's claims and the purges span shards on
// purpose; they fail here, out of the requests' way, and are not asked for.
func TestRequestsRouteToOneShard(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.CitusDSNEnv) == "" {
		t.Skip(storetest.CitusDSNEnv + " not set")
	}
	u, err := url.Parse(storetest.CitusDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", q.Get("options")+" -c citus.multi_task_query_log_level=error")
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	p := start(t, u.String())
	apps := p.merchant("IDR", "AUD")
	m, aud := apps["IDR"], apps["AUD"]
	p.merchant("IDR") // another merchant, so that the shards hold more than one

	r := p.post("/v2/payins", m, map[string]any{"currency": "IDR", "amount": 100000, "payin_method_name": "id_bank_qris_idr", "external_id": "order-1"})
	want(t, r, 201)
	uuid := str(r.JSON(t), "uuid")
	want(t, p.get("/v2/payins/detail?uuid="+uuid, m), 200)
	want(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed"}), 200)
	p.runDue(m)
	want(t, p.get("/v2/balances", m), 200)
	want(t, p.get("/v2/balances/history", m), 200)
	want(t, p.get("/v2/payins/all", m), 200)
	want(t, p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "amount": "30000", "description": "returned"}), 200)

	p.simulateDeposit(aud, aud.AccountNumber, "500")
	p.runDue(aud)
	r = p.post("/v2/payouts", aud, payoutBody("AUD", "au_bank_aud", "100", bsbOK))
	want(t, r, 201)
	want(t, p.get("/v2/payouts/detail?uuid="+str(r.JSON(t), "uuid"), aud), 200)
	want(t, p.get("/v2/payouts/all", aud), 200)

	c := p.newContact(aud, "jane@example.com", nil)
	want(t, p.get("/v2/webhooks/deliveries?uuid="+c["uuid"].(string), aud), 200)
	r = p.post("/v2/payins", m, map[string]any{"currency": "IDR", "amount": 100000, "payin_method_name": "id_bank_qris_idr", "external_id": "order-2"})
	want(t, r, 201)
	want(t, p.post("/v2/payins/cancel", m, map[string]any{"uuid": str(r.JSON(t), "uuid")}), 200)
}
