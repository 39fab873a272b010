package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"payd/internal/fault"
)

// multipartRequest is a POST of body under boundary b.
func multipartRequest(body string) *http.Request {
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	return r
}

// part is one form-data part of boundary b, its delimiter line first.
func part(name, content string) string {
	return "--b\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + content + "\r\n"
}

// readAll reads a body with readParts, every part bounded by 8 bytes but
// skip, which is dropped; it returns the parts it took as name=content
// (name!content when over its bound) and the error's code.
func readAll(r *http.Request) (string, string) {
	var got []string
	limit := func(name string) int64 {
		if name == "skip" {
			return skipPart
		}
		return 8
	}
	err := readParts(r, "with parts", limit, func(name string, data []byte, over bool) error {
		sep := "="
		if over {
			sep = "!"
		}
		got = append(got, name+sep+string(data))
		return nil
	})
	code := ""
	if e, ok := fault.As(err); ok {
		code = e.Code
	} else if err != nil {
		code = err.Error()
	}
	return strings.Join(got, ","), code
}

// TestReadParts: a multipart body is read part by part, each bounded; only
// a body that reaches its final boundary is whole: one cut before it, at
// any point, is 400 MALFORMED_MULTIPART, not a shorter form.
func TestReadParts(t *testing.T) {
	whole := part("a", "one") + part("skip", "dropped") + part("b", "two") + "--b--\r\n"
	tests := []struct {
		name      string
		body      string
		wantParts string
		wantCode  string
	}{
		{"whole", whole, "a=one,b=two", ""},
		{"final boundary without its line break", strings.TrimSuffix(whole, "\r\n"), "a=one,b=two", ""},
		{"line feeds alone", strings.ReplaceAll(whole, "\r\n", "\n"), "a=one,b=two", ""},
		{"an epilogue after the final boundary", whole + "epilogue\r\n", "a=one,b=two", ""},
		{"a preamble", "preamble\r\n" + whole, "a=one,b=two", ""},
		{"no parts", "--b--\r\n", "", ""},
		{"a part over its bound", part("a", "123456789") + "--b--", "a!12345678", ""},
		{"empty", "", "", codeMalformedMultipart},
		{"cut inside a part", part("a", "one")[:40], "", codeMalformedMultipart},
		{"cut after a part", part("a", "one"), "", codeMalformedMultipart},
		{"cut inside the final boundary", part("a", "one") + "--b-", "", codeMalformedMultipart},
		{"cut after a boundary line", part("a", "one") + "--b", "a=one", codeMalformedMultipart},
		{"cut after a boundary line and its line break", part("a", "one") + "--b\r\n", "a=one", codeMalformedMultipart},
		{"cut in a part's headers", part("a", "one") + "--b\r\nContent-Disposition: form-data; name=\"c\"\r\n", "a=one", codeMalformedMultipart},
		{"cut in a skipped part", part("skip", "dropped")[:45], "", codeMalformedMultipart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotParts, gotCode := readAll(multipartRequest(tt.body))
			if gotParts != tt.wantParts || gotCode != tt.wantCode {
				t.Errorf("read %q, code %q; want %q, %q", gotParts, gotCode, tt.wantParts, tt.wantCode)
			}
		})
	}
}

// TestReadPartsBoundaryAcrossReads: the final boundary is found however the
// body's reads split it.
func TestReadPartsBoundaryAcrossReads(t *testing.T) {
	whole := part("a", "one") + "--b--"
	for size := 1; size <= len(whole); size++ {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			r := multipartRequest("")
			r.Body = io.NopCloser(&chunked{s: whole, size: size})
			if gotParts, gotCode := readAll(r); gotParts != "a=one" || gotCode != "" {
				t.Errorf("read %q, code %q; want a=one and no error", gotParts, gotCode)
			}
		})
	}
}

// chunked reads s at most size bytes at a time.
type chunked struct {
	s    string
	size int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.s)
	c.s = c.s[n:]
	return n, nil
}

// TestReadPartsRefuses: what is not a multipart body, or is over its
// route's bound, is refused with its own code.
func TestReadPartsRefuses(t *testing.T) {
	tooLarge := multipartRequest(part("a", strings.Repeat("x", 100)) + "--b--")
	tooLarge.Body = http.MaxBytesReader(httptest.NewRecorder(), tooLarge.Body, 50)
	noBoundary := multipartRequest("--b--")
	noBoundary.Header.Set("Content-Type", "multipart/form-data")
	json := multipartRequest("{}")
	json.Header.Set("Content-Type", "application/json")
	tests := []struct {
		name     string
		r        *http.Request
		wantCode string
	}{
		{"over the route's bound", tooLarge, fault.CodeTooLarge},
		{"no boundary", noBoundary, fault.CodeUnsupportedMedia},
		{"JSON", json, fault.CodeUnsupportedMedia},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := readAll(tt.r); got != tt.wantCode {
				t.Errorf("code %q, want %q", got, tt.wantCode)
			}
		})
	}
}

// TestFormReadersRefuseACutBody: the three multipart forms (a v1 payout
// file, a KYC submission, a QR image) refuse a body cut after a whole part
// as MALFORMED_MULTIPART, where a whole body with the same part reads.
func TestFormReadersRefuseACutBody(t *testing.T) {
	readers := []struct {
		name   string
		part   string
		read   func(*http.Request) error
		wantOK string // the code the whole body is answered with ("" for none)
	}{
		{"payout file", part("description", "Weekly payroll"), func(r *http.Request) error { _, _, err := readPayoutFile(r); return err }, fault.CodeValidation},
		{"KYC", part("email", "jane@example.com"), func(r *http.Request) error { _, err := readKYCForm(r); return err }, ""},
		{"QR image", part("qr_image", "PNG"), func(r *http.Request) error { _, err := readQRImage(r); return err }, ""},
	}
	for _, rd := range readers {
		for _, tt := range []struct {
			name     string
			tail     string
			wantCode string
		}{
			{"whole", "--b--\r\n", rd.wantOK},
			{"cut after the part", "", codeMalformedMultipart},
			{"cut after a boundary line", "--b\r\n", codeMalformedMultipart},
			{"cut before the final boundary's dashes", "--b", codeMalformedMultipart},
		} {
			t.Run(rd.name+"/"+tt.name, func(t *testing.T) {
				err := rd.read(multipartRequest(rd.part + tt.tail))
				got := ""
				if e, ok := fault.As(err); ok {
					got = e.Code
				}
				if got != tt.wantCode {
					t.Errorf("code %q (%v), want %q", got, err, tt.wantCode)
				}
			})
		}
	}
}
