package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// errorMessage is errors.message of an error answer.
func errorMessage(t testing.TB, r response) string {
	t.Helper()
	e, _ := r.JSON(t)["errors"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// TestPayoutFileHostileInput: POST /v1/payouts/file answers every file and
// every text part with a 422 naming what is wrong, never a 500: a row that
// is not CSV (rows[N], N the line it starts on), a payee a spreadsheet would
// run as a formula, a control character in a cell or a text part
// (description alone may run over lines); and when several rows fail, the
// message names the rows its fields name.
func TestPayoutFileHostileInput(t *testing.T) {
	t.Parallel()
	const header = "payee,amount,bsb,account_number\n"
	fields := map[string]string{"description": "Batch from a file"}
	withField := func(name, value string) map[string]string {
		out := map[string]string{"description": "Batch from a file"}
		out[name] = value
		return out
	}
	tests := []struct {
		name      string
		file      string
		fields    map[string]string
		wantField string
	}{
		{"a bare quote", header + "Ja\"ne,10,062000,12345678\n", fields, "rows[2]"},
		{"an unterminated quoted field", header + "Jane,10,062000,12345678\n\"Bob,10,062000,12345678\n", fields, "rows[3]"},
		{"a formula with a bare quote", header + "=HYPERLINK(\"http://evil\"),10,062000,12345678\n", fields, "rows[2]"},
		{"a quoted formula", header + "\"=HYPERLINK(\"\"http://evil\"\")\",10,062000,12345678\n", fields, "rows[2].payee"},
		{"a payee starting @", header + "Jane,10,062000,12345678\n@SUM(A1),10,062000,12345678\n", fields, "rows[3].payee"},
		{"a NUL in a cell", header + "Jane,10,062000,1234\x005678\n", fields, "rows[2].account_number"},
		{"a tab in a cell", header + "Jane\tDoe,10,062000,12345678\n", fields, "rows[2].payee"},
		{"a line break in a quoted cell", header + "\"Jane\nDoe\",10,062000,12345678\n", fields, "rows[2].payee"},
		{"a NUL in description", header + "Jane,10,062000,12345678\n", withField("description", "Batch\x00 from a file"), "description"},
		{"a NUL in external_id", header + "Jane,10,062000,12345678\n", withField("external_id", "run\x00-1"), "external_id"},
		{"a tab in external_id", header + "Jane,10,062000,12345678\n", withField("external_id", "run\t1"), "external_id"},
		{"a NUL in scheduled_at", header + "Jane,10,062000,12345678\n", withField("scheduled_at", "2030-01-01T00:00:00Z\x00"), "scheduled_at"},
		{"a line break in is_retry", header + "Jane,10,062000,12345678\n", withField("is_retry", "true\n"), "is_retry"},
		{"an escaped NUL in webhook_notification", header + "Jane,10,062000,12345678\n",
			withField("webhook_notification", `{"endpoint_url":"https://example.com/\u0000"}`), "webhook_notification.endpoint_url"},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.postFile(m, tt.file, tt.fields), 422, "VALIDATION_FAILED", tt.wantField)
			})
		}
		t.Run("several rows failing", func(t *testing.T) {
			r := p.postFile(m, header+"Jane,10,062000,12345678\nBob,abc,062000,12345678\nCarol,10,06200,12345678\n", fields)
			wantError(t, r, 422, "VALIDATION_FAILED", "rows[3].amount")
			if msg := errorMessage(t, r); strings.Contains(msg, "payout_transaction_details") || !strings.Contains(msg, "rows[3].amount") || !strings.Contains(msg, "rows[4].bsb") {
				t.Errorf("the message %q does not name the rows its fields name: %s", msg, r.Body)
			}
		})
		if list := p.get("/v2/payouts/all", m).JSON(t); list["total"].(json.Number).String() != "0" {
			t.Errorf("refused files created payouts: %v", list)
		}
		t.Run("a description over lines", func(t *testing.T) {
			r := p.postFile(m, header+"Jane,10,062000,12345678\n", withField("description", "Batch from a file\r\nweek 5\tpayroll"))
			want(t, r, 201)
			if got := str(r.JSON(t), "description"); got != "Batch from a file\r\nweek 5\tpayroll" {
				t.Errorf("description = %q", got)
			}
		})
	})
}

// TestPayoutScheduledAtBound: scheduled_at at most 90 days ahead of the
// merchant's clock on POST /v2/payouts, /v1/payouts and /v1/payouts/file;
// further ahead is a 422 naming scheduled_at.
func TestPayoutScheduledAtBound(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		// Three days ahead: 89 days ahead of the merchant's clock is 92 of the machine's.
		p.advance(m, 3*86400)
		now := p.clockNow(m)
		at := func(d time.Duration) string { return now.Add(d).UTC().Format(time.RFC3339) }
		v2 := func(scheduledAt string) response {
			return p.post("/v2/payouts", m, with(payoutBody("AUD", "au_bank_aud", "10", bsbOK), map[string]any{"external_id": "", "scheduled_at": scheduledAt}))
		}
		v1 := func(scheduledAt string) response {
			return p.post("/v1/payouts", m, with(v1Body("", v1Tx("Jane", "10", v1Account)), map[string]any{"scheduled_at": scheduledAt}))
		}
		file := func(scheduledAt string) response {
			return p.postFile(m, "payee,amount,bsb,account_number\nJane,10,062000,12345678\n",
				map[string]string{"description": "Batch from a file", "scheduled_at": scheduledAt})
		}
		tests := []struct {
			name        string
			create      func(string) response
			scheduledAt string
			want        string
		}{
			{"v2 89 days ahead", v2, at(89 * 24 * time.Hour), "201 scheduled"},
			{"v2 91 days ahead", v2, at(91 * 24 * time.Hour), "422 VALIDATION_FAILED scheduled_at"},
			{"v2 9999-12-31", v2, "9999-12-31T00:00:00Z", "422 VALIDATION_FAILED scheduled_at"},
			{"v1 89 days ahead", v1, at(89 * 24 * time.Hour), "201 scheduled"},
			{"v1 91 days ahead", v1, at(91 * 24 * time.Hour), "422 VALIDATION_FAILED scheduled_at"},
			{"file 89 days ahead", file, at(89 * 24 * time.Hour), "201 scheduled"},
			{"file 9999-12-31", file, "9999-12-31T00:00:00Z", "422 VALIDATION_FAILED scheduled_at"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := tt.create(tt.scheduledAt)
				if got := outcome(t, r); got != tt.want {
					t.Errorf("scheduled_at %s: %s, want %s; body %s", tt.scheduledAt, got, tt.want, r.Body)
				}
			})
		}
	})
}

// outcome says an answer in a line: the status and the record's status, or
// the status, the error code and the members named.
func outcome(t testing.TB, r response) string {
	t.Helper()
	if r.Status < 300 {
		return fmt.Sprintf("%d %s", r.Status, str(r.JSON(t), "status"))
	}
	names := slices.Sorted(maps.Keys(r.Fields(t)))
	return strings.Join(append([]string{strconv.Itoa(r.Status), r.ErrorCode(t)}, names...), " ")
}
