package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// kycFile is one file part of a KYC form.
type kycFile struct {
	filename string
	data     []byte
}

func kycPNG(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range 8 {
		img.Set(i, i, color.RGBA{R: 255, G: uint8(i * 30), A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func kycJPEG(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(3, 3, color.RGBA{B: 255, A: 255})
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var kycPDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// kycFields are the text parts of a valid submission.
func kycFields(email, documentNumber string) map[string]string {
	return map[string]string{
		"email": email, "document_type": "national_id", "document_number": documentNumber,
		"issue_date": "2020-01-15", "expiry_date": "2099-01-15", "issue_country": "AU", "nationality": "AU",
	}
}

// kycFiles are the three files of a valid submission: a JPEG selfie, a PNG
// front side and a PDF back side.
func kycFiles(t testing.TB) map[string]kycFile {
	return map[string]kycFile{
		"selfie":            {"selfie.jpg", kycJPEG(t)},
		"id_doc_front_side": {"front.png", kycPNG(t)},
		"id_doc_back_side":  {"back.pdf", kycPDF},
	}
}

// kycForm encodes a multipart/form-data body.
func kycForm(t testing.TB, fields map[string]string, files map[string]kycFile) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for name, v := range fields {
		if err := w.WriteField(name, v); err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range files {
		part, err := w.CreateFormFile(name, f.filename)
		if err != nil {
			t.Fatal(err)
		}
		part.Write(f.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// submitKYC posts a KYC form.
func (p *payd) submitKYC(as creds, fields map[string]string, files map[string]kycFile) response {
	p.t.Helper()
	body, ct := kycForm(p.t, fields, files)
	return p.do(req{method: "POST", path: "/v2/contacts/submit_kyc", as: &as, body: body, header: map[string]string{"Content-Type": ct}})
}

// kycHook is one delivery a receiver got.
type kycHook struct {
	header http.Header
	body   []byte
}

// kycReceiver records every delivery, in order.
type kycReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []kycHook
}

func newKYCReceiver(t *testing.T) *kycReceiver {
	k := &kycReceiver{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		k.mu.Lock()
		k.got = append(k.got, kycHook{header: r.Header.Clone(), body: body})
		k.mu.Unlock()
	}))
	t.Cleanup(k.Close)
	return k
}

// byType waits until n deliveries arrived and the merchant's events are
// drained (p.drained: a delivery beyond n would have arrived by then), and
// returns them by X-Event-Type.
func (k *kycReceiver) byType(t *testing.T, p *payd, as creds, n int) map[string]kycHook {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d webhook deliveries", n), 10*time.Second, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		return len(k.got) >= n
	})
	p.drained(t, as)
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.got) != n {
		t.Fatalf("%d deliveries, want %d", len(k.got), n)
	}
	out := map[string]kycHook{}
	for _, h := range k.got {
		out[h.header.Get("X-Event-Type")] = h
	}
	return out
}

func (k *kycReceiver) notification(auth string) string {
	b, _ := json.Marshal(map[string]string{"endpoint_url": k.URL + "/kyc", "authorization_header": auth})
	return string(b)
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

// TestKYCApprovedWithWebhooks: a submission with a real PNG, JPEG and PDF
// is Ok; the contact goes pending then approved, and the receiver of
// webhook_notification hears kyc.pending and kyc.approved with the
// Authorization header verbatim and the contact as the detail endpoint
// returns it. The files are stored with their type, size and SHA-256.
func TestKYCApprovedWithWebhooks(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		recv := newKYCReceiver(t)
		c := p.newContact(m, "jane@example.com", nil)
		fields := kycFields("JANE@example.com", "N1234567")
		const auth = "Basic dXNlcjpwYXNz extra words"
		fields["webhook_notification"] = recv.notification(auth)
		files := kycFiles(t)
		r := p.submitKYC(m, fields, files)
		want(t, r, 200)
		if got := strings.TrimSpace(string(r.Body)); got != `{"status":"Ok"}` {
			t.Errorf("body = %s", got)
		}
		detail := p.contactDetail(m, "jane@example.com")
		if detail["kyc_status"] != "approved" {
			t.Errorf("kyc_status = %v, want approved", detail["kyc_status"])
		}
		hooks := recv.byType(t, p, m, 2)
		for _, typ := range []string{"kyc.pending", "kyc.approved"} {
			h, ok := hooks[typ]
			if !ok {
				t.Fatalf("no %s delivery; got %v", typ, hooks)
			}
			if got := h.header.Get("Authorization"); got != auth {
				t.Errorf("%s Authorization = %q, want %q verbatim", typ, got, auth)
			}
			if h.header.Get("webhook-id") == "" || h.header.Get("webhook-signature") == "" {
				t.Errorf("%s without Standard Webhooks headers: %v", typ, h.header)
			}
			body := decodeJSON(t, h.body)
			if body["uuid"] != c["uuid"] || body["email"] != "jane@example.com" || body["kyc_status"] != strings.TrimPrefix(typ, "kyc.") {
				t.Errorf("%s body = %s", typ, h.body)
			}
		}
		if got := decodeJSON(t, hooks["kyc.approved"].body); !reflect.DeepEqual(got, detail) {
			t.Errorf("kyc.approved body %v\nis not the detail record %v", got, detail)
		}
		deliveries := p.get("/v2/webhooks/deliveries?uuid="+c["uuid"].(string), m).JSON(t)["records"].([]any)
		if len(deliveries) != 2 {
			t.Errorf("%d deliveries logged for the contact, want 2", len(deliveries))
		}

		rows, err := p.srv.DB.Read().Query(`SELECT d.part, d.content_type, d.size_bytes, d.sha256, d.content FROM kyc_documents d
			JOIN kyc_submissions s ON s.merchant_id = d.merchant_id AND s.id = d.submission_id WHERE s.merchant_id = $1 ORDER BY d.part`, m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		wantType := map[string]string{"id_doc_back_side": "application/pdf", "id_doc_front_side": "image/png", "selfie": "image/jpeg"}
		n := 0
		for rows.Next() {
			var (
				part, ct, sum string
				size          int64
				content       []byte
			)
			if err := rows.Scan(&part, &ct, &size, &sum, &content); err != nil {
				t.Fatal(err)
			}
			n++
			digest := sha256.Sum256(files[part].data)
			if ct != wantType[part] || size != int64(len(files[part].data)) || sum != hex.EncodeToString(digest[:]) || !bytes.Equal(content, files[part].data) {
				t.Errorf("stored %s: type %s, size %d, sha256 %s", part, ct, size, sum)
			}
		}
		if n != 3 {
			t.Errorf("%d documents stored, want 3", n)
		}

		wantError(t, p.submitKYC(m, kycFields("jane@example.com", "N7654321"), kycFiles(t)), 409, "INVALID_STATE", "")
	})
}

// TestKYCFailedThenResubmitted: a document number beginning with FAIL fails
// (kyc.failed); the contact may submit again and be approved.
func TestKYCFailedThenResubmitted(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		recv := newKYCReceiver(t)
		p.newContact(m, "jane@example.com", nil)
		fields := kycFields("jane@example.com", "FAIL-0001")
		fields["webhook_notification"] = recv.notification("Token t1")
		want(t, p.submitKYC(m, fields, kycFiles(t)), 200)
		if got := p.contactDetail(m, "jane@example.com")["kyc_status"]; got != "failed" {
			t.Errorf("kyc_status = %v, want failed", got)
		}
		hooks := recv.byType(t, p, m, 2)
		if h, ok := hooks["kyc.failed"]; !ok || decodeJSON(t, h.body)["kyc_status"] != "failed" || h.header.Get("Authorization") != "Token t1" {
			t.Errorf("kyc.failed delivery = %v", hooks)
		}
		files := kycFiles(t)
		delete(files, "id_doc_back_side")
		fields = kycFields("jane@example.com", "PA1234567")
		fields["document_type"] = "passport"
		want(t, p.submitKYC(m, fields, files), 200)
		if got := p.contactDetail(m, "jane@example.com")["kyc_status"]; got != "approved" {
			t.Errorf("after resubmission kyc_status = %v, want approved", got)
		}
	})
}

// TestKYCUploadRules: a form that is not multipart is 415; a file over 5 MB
// or a body over 16 MiB is 413; a missing file, or one that is not a PNG,
// JPEG or PDF by content (a text file named .png), is 422 naming the part;
// the text parts are checked member by member.
func TestKYCUploadRules(t *testing.T) {
	t.Parallel()
	big := append(kycPNG(t), bytes.Repeat([]byte{0}, 5<<20)...)
	huge := bytes.Repeat([]byte{'x'}, 4<<20+512<<10)
	tests := []struct {
		name   string
		fields func(f map[string]string)
		files  func(f map[string]kycFile)
		status int
		code   string
		field  string
	}{
		{name: "text file named .png", files: func(f map[string]kycFile) {
			f["id_doc_front_side"] = kycFile{"front.png", []byte("I am plain text pretending to be a PNG image.")}
		}, status: 422, code: "VALIDATION_FAILED", field: "id_doc_front_side"},
		{name: "html named .jpg", files: func(f map[string]kycFile) {
			f["selfie"] = kycFile{"selfie.jpg", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>")}
		}, status: 422, code: "VALIDATION_FAILED", field: "selfie"},
		{name: "missing selfie", files: func(f map[string]kycFile) { delete(f, "selfie") }, status: 422, code: "VALIDATION_FAILED", field: "selfie"},
		{name: "missing back side of a national id", files: func(f map[string]kycFile) { delete(f, "id_doc_back_side") },
			status: 422, code: "VALIDATION_FAILED", field: "id_doc_back_side"},
		{name: "empty front side", files: func(f map[string]kycFile) { f["id_doc_front_side"] = kycFile{"front.png", nil} },
			status: 422, code: "VALIDATION_FAILED", field: "id_doc_front_side"},
		{name: "file over 5 MB", files: func(f map[string]kycFile) { f["id_doc_front_side"] = kycFile{"front.png", big} },
			status: 413, code: "TOO_LARGE", field: "id_doc_front_side"},
		{name: "body over 16 MiB", files: func(f map[string]kycFile) {
			f["extra_1"], f["extra_2"], f["extra_3"], f["extra_4"] = kycFile{"a", huge}, kycFile{"b", huge}, kycFile{"c", huge}, kycFile{"d", huge}
		}, status: 413, code: "TOO_LARGE"},
		{name: "document type", fields: func(f map[string]string) { f["document_type"] = "visa" }, status: 422, code: "VALIDATION_FAILED", field: "document_type"},
		{name: "no document number", fields: func(f map[string]string) { delete(f, "document_number") }, status: 422, code: "VALIDATION_FAILED", field: "document_number"},
		{name: "issue date", fields: func(f map[string]string) { f["issue_date"] = "15/01/2020" }, status: 422, code: "VALIDATION_FAILED", field: "issue_date"},
		{name: "expired document", fields: func(f map[string]string) { f["expiry_date"] = "2021-01-01" }, status: 422, code: "VALIDATION_FAILED", field: "expiry_date"},
		{name: "issue country", fields: func(f map[string]string) { f["issue_country"] = "AUS" }, status: 422, code: "VALIDATION_FAILED", field: "issue_country"},
		{name: "nationality", fields: func(f map[string]string) { f["nationality"] = "" }, status: 422, code: "VALIDATION_FAILED", field: "nationality"},
		{name: "webhook_notification not JSON", fields: func(f map[string]string) { f["webhook_notification"] = "http://example.com" },
			status: 422, code: "VALIDATION_FAILED", field: "webhook_notification"},
		{name: "webhook_notification without endpoint", fields: func(f map[string]string) { f["webhook_notification"] = `{"authorization_header":"x"}` },
			status: 422, code: "VALIDATION_FAILED", field: "webhook_notification.endpoint_url"},
		{name: "text part too long", fields: func(f map[string]string) { f["document_number"] = strings.Repeat("1", 2000) },
			status: 422, code: "VALIDATION_FAILED", field: "document_number"},
		{name: "unknown contact", fields: func(f map[string]string) { f["email"] = "nobody@example.com" }, status: 404, code: "NOT_FOUND"},
		{name: "passport without a back side", fields: func(f map[string]string) { f["document_type"] = "passport" },
			files: func(f map[string]kycFile) { delete(f, "id_doc_back_side") }, status: 200},
		{name: "the three types by content, whatever their names", files: func(f map[string]kycFile) {
			f["selfie"] = kycFile{"selfie.pdf", kycPNG(t)}
			f["id_doc_front_side"] = kycFile{"front", kycJPEG(t)}
			f["id_doc_back_side"] = kycFile{"back.txt", kycPDF}
		}, status: 200},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				email := fmt.Sprintf("k%d@example.com", i)
				p.newContact(m, email, nil)
				fields, files := kycFields(email, "N1"), kycFiles(t)
				if tt.fields != nil {
					tt.fields(fields)
				}
				if tt.files != nil {
					tt.files(files)
				}
				r := p.submitKYC(m, fields, files)
				if tt.status == 200 {
					want(t, r, 200)
					if got := p.contactDetail(m, email)["kyc_status"]; got != "approved" {
						t.Errorf("kyc_status = %v", got)
					}
					return
				}
				wantError(t, r, tt.status, tt.code, tt.field)
				if got := p.contactDetail(m, email)["kyc_status"]; got != "none" {
					t.Errorf("a refused submission moved kyc_status to %v", got)
				}
			})
		}
		t.Run("not multipart", func(t *testing.T) {
			p.newContact(m, "json@example.com", nil)
			r := p.post("/v2/contacts/submit_kyc", m, map[string]any{"email": "json@example.com", "selfie": "aGVsbG8="})
			wantError(t, r, 415, "UNSUPPORTED_MEDIA_TYPE", "")
			r = p.do(req{method: "POST", path: "/v2/contacts/submit_kyc", as: &m, body: "garbage", header: map[string]string{"Content-Type": "multipart/form-data"}})
			wantError(t, r, 415, "UNSUPPORTED_MEDIA_TYPE", "")
		})
		t.Run("broken multipart", func(t *testing.T) {
			r := p.do(req{method: "POST", path: "/v2/contacts/submit_kyc", as: &m, body: "--b\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\nx",
				header: map[string]string{"Content-Type": "multipart/form-data; boundary=b"}})
			wantError(t, r, 400, "MALFORMED_MULTIPART", "")
		})
	})
}

// TestKYCIdempotent: a submission retried with its Idempotency-Key is
// answered from the first one and neither stores the files again nor sends
// the webhooks again.
func TestKYCIdempotent(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		recv := newKYCReceiver(t)
		p.newContact(m, "jane@example.com", nil)
		fields := kycFields("jane@example.com", "N1")
		fields["webhook_notification"] = recv.notification("Basic x")
		body, ct := kycForm(t, fields, kycFiles(t))
		send := func() response {
			return p.do(req{method: "POST", path: "/v2/contacts/submit_kyc", as: &m, body: body,
				header: map[string]string{"Content-Type": ct, "Idempotency-Key": "kyc-1"}})
		}
		first, second := send(), send()
		want(t, first, 200)
		want(t, second, 200)
		if second.Header.Get("Idempotent-Replayed") != "true" || string(second.Body) != string(first.Body) {
			t.Errorf("retry: Idempotent-Replayed %q, body %s", second.Header.Get("Idempotent-Replayed"), second.Body)
		}
		var n int
		if err := p.srv.DB.Read().QueryRow(`SELECT count(*) FROM kyc_submissions WHERE merchant_id = $1`, m.MerchantID).Scan(&n); err != nil || n != 1 {
			t.Errorf("%d submissions stored (%v), want 1", n, err)
		}
		recv.byType(t, p, m, 2)
	})
}
