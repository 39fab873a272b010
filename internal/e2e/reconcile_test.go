package e2e

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/server"
)

// reconcileDay is the sandbox day the reconciliation tests settle on: the
// end of daylight saving in Sydney (2027-04-04 lasts 25 hours).
var reconcileDay = time.Date(2027, time.April, 4, 0, 0, 0, 0, sydneyZone)

// onReconcileDay starts the deployment's clock the day before reconcileDay.
func onReconcileDay(c *server.Config) {
	c.Clock = clock.Offset(clock.Real{}, time.Until(reconcileDay.Add(-12*time.Hour)))
}

// settledDay makes a Sydney AUD merchant and, on reconcileDay, two
// settlements and an external transfer to its bank account 12345678, each
// completed; it returns the merchant and the records' uuids.
func (p *payd) settledDay(t *testing.T) (creds, []string) {
	t.Helper()
	m := p.merchant("AUD")["AUD"]
	want(t, p.post("/v2/sandbox/clock", m, map[string]any{"now": reconcileDay.Add(9 * time.Hour).Format(time.RFC3339)}), 200)
	p.fund(m, "1000")
	want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank}}), 200)
	var uuids []string
	for _, amount := range []string{"100", "250.50"} {
		r := p.post("/v2/settlements", m, map[string]any{"amount": amount})
		want(t, r, 201)
		uuids = append(uuids, str(r.JSON(t), "uuid"))
	}
	r := p.post("/v2/treasury_accounts", m, map[string]any{})
	want(t, r, 201)
	tid := str(r.JSON(t), "id")
	in := p.post("/v2/transfers", m, map[string]any{"amount": "200", "description": "to treasury", "treasury_account_id": tid}).JSON(t)
	want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(in, "uuid"), "status": "completed"}), 200)
	ext := p.post("/v2/transfers", m, map[string]any{"amount": "75.25", "description": "to my bank", "external_bank_account": audBank}).JSON(t)
	want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(ext, "uuid"), "status": "completed"}), 200)
	uuids = append(uuids, str(ext, "uuid"))
	p.advance(m, 10)
	for _, uuid := range uuids[:2] {
		if s := p.settlementStatus(m, uuid); s != "completed" {
			t.Fatalf("settlement %s is %s, want completed", uuid, s)
		}
	}
	return m, uuids
}

// bankStatement is the sandbox bank's statement of reconcileDay in format.
func (p *payd) bankStatement(t *testing.T, m creds, format string) []byte {
	t.Helper()
	r := p.get("/v2/sandbox/bank_statement?date="+reconcileDay.Format(time.DateOnly)+"&format="+format, m)
	want(t, r, 200)
	return r.Body
}

// uploadStatement posts a statement file (and account_number when given).
func (p *payd) uploadStatement(m creds, file []byte, account string) response {
	p.t.Helper()
	fields := map[string]string{}
	if account != "" {
		fields["account_number"] = account
	}
	body, ct := kycForm(p.t, fields, map[string]kycFile{"file": {"statement", file}})
	return p.do(req{method: "POST", path: "/v2/reconciliation/statements", as: &m, body: body, header: map[string]string{"Content-Type": ct}})
}

func reconcileCounts(st map[string]any) string {
	n := func(k string) any {
		if v, ok := st[k].([]any); ok {
			return len(v)
		}
		return st[k]
	}
	return fmt.Sprintf("matched %v unmatched %v ignored %v missing %v", n("matched"), n("unmatched"), n("ignored"), n("missing"))
}

// TestReconciliationRoundTrip: a sandbox day of settlements and an external
// transfer, taken as the sandbox bank's statement in each format and
// uploaded back, matches with no exception; the same file again is the same
// statement (200, nothing added).
func TestReconciliationRoundTrip(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		for _, format := range []string{"camt053", "bai2", "csv"} {
			t.Run(format, func(t *testing.T) {
				m, uuids := p.settledDay(t)
				file := p.bankStatement(t, m, format)
				account := ""
				if format == "csv" {
					account = "12345678"
				}
				r := p.uploadStatement(m, file, account)
				want(t, r, 201)
				st := r.JSON(t)
				if got := reconcileCounts(st); got != "matched 3 unmatched 0 ignored 0 missing 0" || str(st, "from") != "2027-04-04" || str(st, "currency") != "AUD" {
					t.Errorf("upload of the sandbox bank's %s: %s, %s", format, got, r.Body)
				}
				again := p.uploadStatement(m, file, account)
				want(t, again, 200)
				if str(again.JSON(t), "id") != str(st, "id") {
					t.Errorf("the same file again: id %s, want %s", str(again.JSON(t), "id"), str(st, "id"))
				}
				list := p.get("/v2/reconciliation/statements", m).JSON(t)
				if n := len(list["records"].([]any)); n != 1 {
					t.Errorf("%d statements listed after two uploads of one file, want 1", n)
				}
				d := p.get("/v2/reconciliation/statements/detail?id="+str(st, "id"), m).JSON(t)
				matched := map[string]bool{}
				for _, l := range d["lines"].([]any) {
					to, _ := l.(map[string]any)["matched_to"].(map[string]any)
					matched[str(to, "uuid")] = true
				}
				for _, uuid := range uuids {
					if !matched[uuid] {
						t.Errorf("%s is matched by no line: %v", uuid, d["lines"])
					}
				}
			})
		}
	}, onReconcileDay)
}

// TestReconciliationExceptions: one altered amount is one unmatched line and
// one missing settlement, which a manual match resolves; an unexplained
// credit is ignored with a reason; failed control totals and unknown formats
// are refused; another merchant's statements and lines are unknown.
func TestReconciliationExceptions(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m, uuids := p.settledDay(t)
		file := p.bankStatement(t, m, "csv")
		rows, err := csv.NewReader(bytes.NewReader(file)).ReadAll()
		if err != nil || len(rows) != 4 {
			t.Fatalf("the sandbox CSV: %v %q", err, file)
		}
		rows[1][1] = "99.99" // the 100.00 settlement, altered
		rows = append(rows, []string{"2027-04-04", "42.00", "GIFT", "=HYPERLINK(\"x\")"})
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.WriteAll(rows)
		r := p.uploadStatement(m, buf.Bytes(), "12345678")
		want(t, r, 201)
		st := r.JSON(t)
		if got := reconcileCounts(st); got != "matched 2 unmatched 2 ignored 0 missing 1" {
			t.Errorf("with an altered amount and an unexplained credit: %s, want matched 2 unmatched 2 missing 1", got)
		}
		d := p.get("/v2/reconciliation/statements/detail?id="+str(st, "id"), m).JSON(t)
		lines := d["lines"].([]any)
		missing := d["missing"].([]any)
		if len(missing) != 1 || str(missing[0].(map[string]any), "uuid") != uuids[0] || str(missing[0].(map[string]any), "amount") != "100.00" {
			t.Fatalf("missing = %v, want settlement %s of 100.00", missing, uuids[0])
		}
		altered, gift := str(lines[0].(map[string]any), "id"), str(lines[3].(map[string]any), "id")

		other := p.merchant("AUD")["AUD"]
		wantError(t, p.get("/v2/reconciliation/statements/detail?id="+str(st, "id"), other), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/reconciliation/lines/match", other, map[string]any{"line_id": altered, "type": "settlement", "uuid": uuids[0]}), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/reconciliation/lines/ignore", other, map[string]any{"line_id": gift, "reason": "not mine"}), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/reconciliation/lines/unmatch", other, map[string]any{"line_id": altered}), 404, "NOT_FOUND", "")

		wantError(t, p.post("/v2/reconciliation/lines/match", m, map[string]any{"line_id": altered, "type": "payout", "uuid": uuids[0]}), 422, "VALIDATION_FAILED", "type")
		wantError(t, p.post("/v2/reconciliation/lines/match", m, map[string]any{"line_id": altered, "type": "settlement", "uuid": "NOPE0000"}), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/reconciliation/lines/match", m, map[string]any{"line_id": gift, "type": "settlement", "uuid": uuids[1]}), 409, "INVALID_STATE", "")
		wantError(t, p.post("/v2/reconciliation/lines/ignore", m, map[string]any{"line_id": gift, "reason": ""}), 422, "VALIDATION_FAILED", "reason")
		wantError(t, p.post("/v2/reconciliation/lines/unmatch", m, map[string]any{"line_id": gift}), 409, "INVALID_STATE", "")

		r = p.post("/v2/reconciliation/lines/match", m, map[string]any{"line_id": altered, "type": "settlement", "uuid": uuids[0]})
		want(t, r, 200)
		if to, _ := r.JSON(t)["matched_to"].(map[string]any); str(r.JSON(t), "status") != "matched" || str(to, "uuid") != uuids[0] {
			t.Errorf("manual match: %s", r.Body)
		}
		want(t, p.post("/v2/reconciliation/lines/ignore", m, map[string]any{"line_id": gift, "reason": "a gift from the owner"}), 200)
		want(t, p.post("/v2/reconciliation/lines/unmatch", m, map[string]any{"line_id": gift}), 200)
		want(t, p.post("/v2/reconciliation/lines/ignore", m, map[string]any{"line_id": gift, "reason": "a gift from the owner"}), 200)
		d = p.get("/v2/reconciliation/statements/detail?id="+str(st, "id"), m).JSON(t)
		if got := reconcileCounts(d); got != "matched 3 unmatched 0 ignored 1 missing 0" {
			t.Errorf("after the manual match and ignore: %s", got)
		}

		camt := p.bankStatement(t, m, "camt053")
		wrong := bytes.Replace(camt, []byte(">250.50<"), []byte(">250.51<"), 1)
		if bytes.Equal(wrong, camt) {
			t.Fatalf("no 250.50 in the camt.053:\n%s", camt)
		}
		wantError(t, p.uploadStatement(m, wrong, ""), 422, "VALIDATION_FAILED", "file")
		wantError(t, p.uploadStatement(m, camt, "99999999"), 422, "VALIDATION_FAILED", "account_number")
		wantError(t, p.uploadStatement(m, []byte(":20:STMT\n:25:12345678\n"), ""), 415, "UNSUPPORTED_MEDIA_TYPE", "")
		wantError(t, p.uploadStatement(m, file, ""), 422, "VALIDATION_FAILED", "account_number")
		wantError(t, p.get("/v2/sandbox/bank_statement?date=2027-04-04&format=mt940", m), 422, "VALIDATION_FAILED", "format")
		wantError(t, p.get("/v2/sandbox/bank_statement?date=04/04/2027", m), 422, "VALIDATION_FAILED", "date")
		wantError(t, p.get("/v2/sandbox/bank_statement?date=2027-04-04", other), 422, "NO_BENEFICIARY", "")
		if n := len(p.get("/v2/reconciliation/statements", m).JSON(t)["records"].([]any)); n != 1 {
			t.Errorf("%d statements after the refusals, want 1", n)
		}

		// The exports of the day, the range in the merchant's zone.
		day := "from_date=2027-04-04&to_date=2027-04-04"
		hist := p.get("/v2/exports/balance_history.csv?"+day, m)
		want(t, hist, 200)
		records, err := csv.NewReader(bytes.NewReader(hist.Body)).ReadAll()
		if err != nil || len(records) < 4 || strings.Join(records[0], ",") != "id,amount,currency,request_type,transaction_type,status,reference_id,outgoing,fees,total,created_at,updated_at" {
			t.Fatalf("balance_history.csv: %v\n%s", err, hist.Body)
		}
		for _, rec := range records[1:] {
			if !strings.HasSuffix(rec[10], "+10:00") && !strings.HasSuffix(rec[10], "+11:00") {
				t.Errorf("created_at %s is not in Sydney's offset", rec[10])
			}
		}
		for _, path := range []string{"/v2/exports/payins.csv", "/v2/exports/payouts.csv"} {
			want(t, p.get(path+"?"+day, m), 200)
		}
		wantError(t, p.get("/v2/exports/payouts.csv?from_date=2026-01-01&to_date=2027-04-04", m), 422, "VALIDATION_FAILED", "to_date")
		wantError(t, p.get("/v2/exports/payins.csv?from_date=2027-04-05&to_date=2027-04-04", m), 422, "VALIDATION_FAILED", "to_date")
	}, onReconcileDay)
}
