package e2e

import (
	"testing"
)

// postKeyedForm encodes fields and files as a multipart body (a new
// boundary, and the parts in a new order, each call) and POSTs it to path
// with an Idempotency-Key.
func (p *payd) postKeyedForm(as creds, path, key string, fields map[string]string, files map[string]kycFile) (response, string) {
	p.t.Helper()
	body, ct := kycForm(p.t, fields, files)
	r := p.do(req{method: "POST", path: path, as: &as, body: body, header: map[string]string{"Content-Type": ct, "Idempotency-Key": key}})
	return r, ct
}

// multipartForm is the fields and files of one multipart request.
type multipartForm struct {
	fields map[string]string
	files  map[string]kycFile
}

// TestIdempotentMultipartRetry: a retry of a multipart upload under its
// Idempotency-Key, encoded again as every client does (a new boundary, its
// parts in another order), replays the stored answer and makes no second
// effect; another file or field under the key is 422 IDEMPOTENCY_KEY_REUSED
// (CONTRACT §3, §24). Each multipart endpoint: the v1 payout file, KYC
// documents, the bank QR image lookup, a bank statement.
func TestIdempotentMultipartRetry(t *testing.T) {
	t.Parallel()
	const payoutCSV = "payee,amount,payid,payid_type\nJane,10,jane@example.com,email\n"
	payoutFields := map[string]string{"description": "Batch from a file", "external_id": "file-batch"}
	tests := []struct {
		name     string
		path     string
		currency string
		prepare  func(p *payd, m creds)
		form     func(t *testing.T) multipartForm
		other    func(t *testing.T) multipartForm
		status   int
		// effects counts the merchant's records the request makes.
		effects string
	}{
		{
			name: "payout file", path: "/v1/payouts/file", currency: "AUD",
			prepare: func(p *payd, m creds) { p.fund(m, "1000") },
			form: func(t *testing.T) multipartForm {
				return multipartForm{payoutFields, map[string]kycFile{"file": {"batch.csv", []byte(payoutCSV)}}}
			},
			other: func(t *testing.T) multipartForm {
				return multipartForm{payoutFields, map[string]kycFile{"file": {"batch.csv", []byte(payoutCSV + "Bob,5,bob@example.com,email\n")}}}
			},
			status: 201, effects: `SELECT count(*) FROM payouts WHERE merchant_id = $1`,
		},
		{
			name: "KYC documents", path: "/v2/contacts/submit_kyc", currency: "AUD",
			prepare: func(p *payd, m creds) { p.newContact(m, "jane@example.com", nil) },
			form: func(t *testing.T) multipartForm {
				return multipartForm{kycFields("jane@example.com", "N1234567"), kycFiles(t)}
			},
			other: func(t *testing.T) multipartForm {
				return multipartForm{kycFields("jane@example.com", "N7654321"), kycFiles(t)}
			},
			status: 200, effects: `SELECT count(*) FROM kyc_submissions WHERE merchant_id = $1`,
		},
		{
			name: "bank QR image", path: "/v2/banks/lookup/qr_image", currency: "VND",
			prepare: func(p *payd, m creds) {},
			form: func(t *testing.T) multipartForm {
				return multipartForm{nil, map[string]kycFile{"qr_image": {"code.png", qrTestImage(t, "vietqr.png")}}}
			},
			other: func(t *testing.T) multipartForm {
				return multipartForm{nil, map[string]kycFile{"qr_image": {"code.png", qrTestImage(t, "vietqr.jpg")}}}
			},
			// A lookup writes nothing but its stored answer.
			status: 200, effects: `SELECT count(*) FROM idempotency_keys WHERE merchant_id = $1`,
		},
		{
			name: "bank statement", path: "/v2/reconciliation/statements", currency: "AUD",
			prepare: func(p *payd, m creds) {},
			form: func(t *testing.T) multipartForm {
				return multipartForm{map[string]string{"account_number": "12345678"}, map[string]kycFile{"file": {"day.csv", []byte("date,amount,reference,description\n2026-03-02,10.00,REF,x\n")}}}
			},
			other: func(t *testing.T) multipartForm {
				return multipartForm{map[string]string{"account_number": "12345678"}, map[string]kycFile{"file": {"day.csv", []byte("date,amount,reference,description\n2026-03-02,11.00,REF,x\n")}}}
			},
			status: 201, effects: `SELECT count(*) FROM reconciliation_statements WHERE merchant_id = $1`,
		},
	}
	each(t, func(t *testing.T, p *payd) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				m := p.merchant(tt.currency)[tt.currency]
				tt.prepare(p, m)
				f := tt.form(t)
				first, firstType := p.postKeyedForm(m, tt.path, "upload-1", f.fields, f.files)
				want(t, first, tt.status)
				retry, retryType := p.postKeyedForm(m, tt.path, "upload-1", f.fields, f.files)
				if retryType == firstType {
					t.Fatalf("the retry has the first attempt's boundary (%s): the test proves nothing", retryType)
				}
				if retry.Status != first.Status || string(retry.Body) != string(first.Body) || retry.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("retry under a new boundary: %d %s (Idempotent-Replayed %q); want the stored %d %s",
						retry.Status, retry.Body, retry.Header.Get("Idempotent-Replayed"), first.Status, first.Body)
				}
				o := tt.other(t)
				other, _ := p.postKeyedForm(m, tt.path, "upload-1", o.fields, o.files)
				wantError(t, other, 422, "IDEMPOTENCY_KEY_REUSED", "")
				var n int
				if err := p.srv.DB.Read().QueryRow(tt.effects, m.MerchantID).Scan(&n); err != nil || n != 1 {
					t.Errorf("%d records (%v), want the first request's 1", n, err)
				}
			})
		}
	})
}
