package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestIdempotencyKeyRefusals: an Idempotency-Key of more than 255
// characters, or with a control character or broken UTF-8, is 422
// VALIDATION_FAILED naming Idempotency-Key, like any other refused field
// (CONTRACT §3, §24); 255 characters are taken, counted as characters, not
// bytes. A key that Go's server refuses itself (a NUL, say) never reaches
// payd and is its plain 400. None of the refused requests has an effect.
func TestIdempotencyKeyRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		body := map[string]any{"account_number": m.AccountNumber, "amount": "40"}
		accepted := []struct {
			name string
			key  string
		}{
			{"255 characters", strings.Repeat("k", 255)},
			{"255 two-byte characters", strings.Repeat("é", 255)},
		}
		for _, tt := range accepted {
			t.Run(tt.name, func(t *testing.T) {
				want(t, p.keyed(m, "/v1/simulate_deposit", tt.key, body), 201)
			})
		}
		refused := []struct {
			name string
			key  string
		}{
			{"256 characters", strings.Repeat("k", 256)},
			{"256 two-byte characters", strings.Repeat("é", 256)},
			{"a tab inside", "order\t1"},
			{"broken UTF-8", "order-\xff"},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.keyed(m, "/v1/simulate_deposit", tt.key, body), 422, "VALIDATION_FAILED", "Idempotency-Key")
			})
		}
		t.Run("a NUL", func(t *testing.T) {
			if got := rawKeyedStatus(t, p, m, "order\x001"); got != http.StatusBadRequest {
				t.Errorf("status = %d, want net/http's 400", got)
			}
		})
		p.runDue(m)
		if h := p.history(m, ""); len(h.Records) != 2 {
			t.Errorf("history has %d records, want the 2 accepted deposits", len(h.Records))
		}
	})
}

// rawKeyedStatus sends a keyed deposit over a bare connection (Go's client
// refuses to send a key with a control character) and returns the status.
func rawKeyedStatus(t *testing.T, p *payd, as creds, key string) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.root, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"account_number":%q,"amount":"40"}`, as.AccountNumber)
	fmt.Fprintf(conn, "POST /api/v1/simulate_deposit HTTP/1.1\r\nHost: payd\r\nConnection: close\r\napp-id: %s\r\nsecret-key: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nIdempotency-Key: %s\r\n\r\n%s", as.AppID, as.SecretKey, len(body), key, body)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
