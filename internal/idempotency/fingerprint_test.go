package idempotency

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

// testPart is written as one part of a test form.
type testPart struct {
	name, filename, contentType, content string
}

// form encodes parts as multipart/form-data under boundary, in their order.
func form(t *testing.T, boundary string, parts ...testPart) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(boundary); err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disposition := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.filename != "" {
			disposition += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", disposition)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write([]byte(p.content))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

var (
	csvFile     = testPart{"file", "batch.csv", "text/csv", "payee,amount\nJane,10\n"}
	description = testPart{"description", "", "", "Weekly payroll"}
	externalID  = testPart{"external_id", "", "", "batch-1"}
)

// TestFingerprintOfForms: a multipart body is the same request under any
// boundary and any order of differently named parts (CONTRACT §24), and a
// different request as soon as a field or file differs in name, file name,
// content type, content or the order of parts of one name, however the
// bytes are cut between them.
func TestFingerprintOfForms(t *testing.T) {
	ct, body := form(t, "first-attempt", csvFile, description, externalID)
	first := Fingerprint("POST", "/v1/payouts/file", ct, body)
	tests := []struct {
		name  string
		parts []testPart
		same  bool
	}{
		{"the same parts under a new boundary", []testPart{csvFile, description, externalID}, true},
		{"the parts in another order", []testPart{externalID, csvFile, description}, true},
		{"another file content", []testPart{{"file", "batch.csv", "text/csv", "payee,amount\nJane,11\n"}, description, externalID}, false},
		{"another file name", []testPart{{"file", "other.csv", "text/csv", csvFile.content}, description, externalID}, false},
		{"another content type", []testPart{{"file", "batch.csv", "application/octet-stream", csvFile.content}, description, externalID}, false},
		{"the file sent as a field", []testPart{{"file", "", "text/csv", csvFile.content}, description, externalID}, false},
		{"another field value", []testPart{csvFile, {"description", "", "", "Monthly payroll"}, externalID}, false},
		{"a field left out", []testPart{csvFile, description}, false},
		{"a field sent twice", []testPart{csvFile, description, externalID, externalID}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := form(t, fmt.Sprintf("retry-%d", i), tt.parts...)
			got := Fingerprint("POST", "/v1/payouts/file", ct, body) == first
			if got != tt.same {
				t.Errorf("same request as the first = %v, want %v", got, tt.same)
			}
		})
	}
}

// TestFingerprintFormsDoNotCollide: forms whose names, file names, types
// and contents run together into the same text are different requests, and
// so are parts of one name in another order.
func TestFingerprintFormsDoNotCollide(t *testing.T) {
	tests := []struct {
		name string
		a, b []testPart
	}{
		{"a name's end moved into the file name", []testPart{{"ab", "c", "", "x"}}, []testPart{{"a", "bc", "", "x"}}},
		{"a file name's end moved into the type", []testPart{{"f", "a.cs", "vtext/csv", "x"}}, []testPart{{"f", "a.csv", "text/csv", "x"}}},
		{"content moved between parts", []testPart{{"a", "", "", "xy"}, {"b", "", "", ""}}, []testPart{{"a", "", "", "x"}, {"b", "", "", "y"}}},
		{"parts of one name in another order", []testPart{{"tag", "", "", "1"}, {"tag", "", "", "2"}}, []testPart{{"tag", "", "", "2"}, {"tag", "", "", "1"}}},
		{"one part or two", []testPart{{"a", "", "", "x"}}, []testPart{{"a", "", "", "x"}, {"a", "", "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cta, a := form(t, "boundary-a", tt.a...)
			ctb, b := form(t, "boundary-b", tt.b...)
			if got := Fingerprint("POST", "/v1/payouts/file", cta, a) == Fingerprint("POST", "/v1/payouts/file", ctb, b); got {
				t.Errorf("the two forms have one fingerprint")
			}
		})
	}
}

// TestFingerprintOfOtherBodies: a body that is not multipart/form-data, or
// does not read as one to its final boundary, is compared on its bytes, as
// before forms were compared on their parts: a key stored for such a
// request still replays it.
func TestFingerprintOfOtherBodies(t *testing.T) {
	ct, body := form(t, "b1", csvFile, description)
	_, otherBoundary := form(t, "b2", csvFile, description)
	cut := body[:len(body)-len("--b1--\r\n")]
	tests := []struct {
		name         string
		method, path string
		contentType  string
		body         []byte
		want         string
	}{
		// sha256("POST /v1/simulate_deposit\n{\"amount\":\"40\"}"), what every
		// stored key of a JSON request holds.
		{"a JSON body", "POST", "/v1/simulate_deposit", "application/json", []byte(`{"amount":"40"}`),
			"84975623afff1970267c16db05b50c3b8702bd4239d110a2186e1ab4303e8522"},
		{"a form sent as another type", "POST", "/v1/payouts/file", "application/octet-stream", body, rawFingerprint("POST", "/v1/payouts/file", body)},
		{"a form without its boundary parameter", "POST", "/v1/payouts/file", "multipart/form-data", body, rawFingerprint("POST", "/v1/payouts/file", body)},
		{"a form under another boundary than its type's", "POST", "/v1/payouts/file", ct, otherBoundary, rawFingerprint("POST", "/v1/payouts/file", otherBoundary)},
		{"a form cut before its final boundary", "POST", "/v1/payouts/file", ct, cut, rawFingerprint("POST", "/v1/payouts/file", cut)},
		{"an empty body of a form's type", "POST", "/v1/payouts/file", ct, nil, rawFingerprint("POST", "/v1/payouts/file", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fingerprint(tt.method, tt.path, tt.contentType, tt.body); got != tt.want {
				t.Errorf("fingerprint = %s, want %s", got, tt.want)
			}
		})
	}
}

// rawFingerprint is the fingerprint of a body's bytes.
func rawFingerprint(method, path string, body []byte) string {
	return Fingerprint(method, path, "application/octet-stream", body)
}

// TestFingerprintOfTooManyParts: a form of more than maxFormParts parts is
// compared on its bytes, so what is kept while reading it stays bounded.
func TestFingerprintOfTooManyParts(t *testing.T) {
	tests := []struct {
		name     string
		parts    int
		wantForm bool
	}{
		{"at the bound", maxFormParts, true},
		{"one part over", maxFormParts + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := make([]testPart, tt.parts)
			for i := range parts {
				parts[i] = testPart{"f", "", "", "x"}
			}
			ct, body := form(t, "b", parts...)
			if got := strings.HasPrefix(Fingerprint("POST", "/v1/payouts/file", ct, body), formPrefix); got != tt.wantForm {
				t.Errorf("compared on its parts = %v, want %v", got, tt.wantForm)
			}
		})
	}
}
