package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/routers"

	"payd/internal/httpapi"
)

// The OpenAPI document's examples are real exchanges: with -update, the
// end-to-end tests record, per operation, one 2xx request and answer that
// the document accepts (the richest under maxExampleBytes), normalised so
// that they hold no address of the test machine and no token, signature or
// secret, as examplesDir/<operationId>.json. payd embeds these files and puts
// them into its document (internal/httpapi/example.go); TestOpenAPIExamples
// there checks that every operation has them and that they match its schemas.

const (
	examplesDir     = "../httpapi/testdata/examples"
	maxExampleBytes = 3 << 10
)

// recorded holds the size of the example written for each operation in
// this run, so a richer exchange (under the bound) replaces a poorer one.
var recorded struct {
	sync.Mutex
	size map[string]int
}

// recordExample keeps the exchange as its operation's example when -update
// is set and it is a better one than recorded so far. The exchange has
// already passed the contract check.
func (p *payd) recordExample(router routers.Router, hr *http.Request, reqBody []byte, status int, resHeader http.Header, resBody []byte) {
	if !*update || status/100 != 2 || resHeader.Get("Idempotent-Replayed") != "" {
		return
	}
	probe, err := http.NewRequest(hr.Method, "http://payd"+strings.TrimPrefix(hr.URL.Path, "/api")+"?"+hr.URL.RawQuery, nil)
	if err != nil {
		return
	}
	route, _, err := router.FindRoute(probe)
	if err != nil || route.Operation == nil {
		return
	}
	ex := httpapi.Example{Method: hr.Method, Path: strings.TrimPrefix(hr.URL.Path, "/api"), Query: p.normalise(hr.URL.RawQuery), Status: status}
	ex.Request = p.exampleRequest(hr.Header.Get("Content-Type"), reqBody)
	ex.Response = p.exampleBody(resHeader.Get("Content-Type"), resBody)
	if ex.Response == nil || (len(reqBody) > 0 && ex.Request == nil) {
		return
	}
	size := len(ex.Request) + len(ex.Response)
	id := route.Operation.OperationID
	recorded.Lock()
	defer recorded.Unlock()
	if recorded.size == nil {
		recorded.size = map[string]int{}
	}
	if old, ok := recorded.size[id]; ok && !richer(size, old) {
		return
	}
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ex); err != nil {
		p.t.Errorf("example %s: %v", id, err)
		return
	}
	if err := os.MkdirAll(examplesDir, 0o755); err != nil {
		p.t.Errorf("example %s: %v", id, err)
		return
	}
	if err := os.WriteFile(filepath.Join(examplesDir, id+".json"), raw.Bytes(), 0o644); err != nil {
		p.t.Errorf("example %s: %v", id, err)
		return
	}
	recorded.size[id] = size
}

// richer says whether an example of size bytes is better than one of old
// bytes: the larger under maxExampleBytes (a list with records rather than
// an empty one), else the smaller.
func richer(size, old int) bool {
	if old > maxExampleBytes {
		return size < old
	}
	return size <= maxExampleBytes && size > old
}

// exampleRequest is a request body as an example: JSON as sent, a
// multipart body as an object of its parts (files as text when they are
// short text, else a placeholder).
func (p *payd) exampleRequest(contentType string, body []byte) json.RawMessage {
	if len(body) == 0 {
		return nil
	}
	media, params, _ := mime.ParseMediaType(contentType)
	if media != "multipart/form-data" {
		return p.exampleBody("application/json", body)
	}
	parts := map[string]string{}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			break
		}
		value, _ := io.ReadAll(part)
		switch {
		case part.FileName() == "":
			parts[part.FormName()] = p.normalise(string(value))
		case utf8.Valid(value) && len(value) <= 1<<10:
			parts[part.FormName()] = string(value)
		default:
			parts[part.FormName()] = "(the file's bytes: " + http.DetectContentType(value) + ")"
		}
	}
	return marshal(parts)
}

// exampleBody is a body as an example: JSON with its numbers' digits kept
// and its secrets and addresses replaced, other media as a string.
func (p *payd) exampleBody(contentType string, body []byte) json.RawMessage {
	if !strings.Contains(contentType, "json") {
		return marshal(string(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return marshal(p.scrub("", v))
}

// marshal is json.Marshal without escaping &, < and > (URLs read as written).
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// secretMember names members whose values are credentials.
var secretMember = regexp.MustCompile(`^(token|[a-z_]*_token|[a-z_]*secret[a-z_]*|signature|password|authorization_header)$`)

// scrub replaces credentials with obviously fake values and this machine's
// addresses with example ones, member by member.
func (p *payd) scrub(name string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, inner := range v {
			v[k] = p.scrub(k, inner)
		}
		return v
	case []any:
		for i, inner := range v {
			v[i] = p.scrub(name, inner)
		}
		return v
	case string:
		if secretMember.MatchString(name) && !strings.HasSuffix(name, "_at") && v != "" {
			return "example-" + strings.ToLower(strings.ReplaceAll(name, "_", "-"))
		}
		return p.normalise(v)
	}
	return v
}

var (
	localAddress = regexp.MustCompile(`https?://(127\.0\.0\.1|localhost|\[::1\]):[0-9]+`)
	secretParam  = regexp.MustCompile(`((?:^|[?&])(?:t|token|signature|sig|key|access_token)=)[^&"\s]*`)
)

// normalise puts example addresses in place of the test server's and its
// receivers', and example values in place of tokens and signatures in URLs.
func (p *payd) normalise(s string) string {
	if p.root != "" {
		s = strings.ReplaceAll(s, p.root, "https://payd.example.com")
	}
	s = localAddress.ReplaceAllString(s, "https://merchant.example.com")
	return secretParam.ReplaceAllString(s, "${1}example")
}
