package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/contact"
	"payd/internal/dispute"
	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/idempotency"
	"payd/internal/input"
	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/payin"
	"payd/internal/payout"
	"payd/internal/ratelimit"
	"payd/internal/report"
	"payd/internal/settlement"
	"payd/internal/transfer"
	"payd/internal/webhook"
)

// The OpenAPI document is generated from the route table and the Go types of
// each route's body and response, so it cannot drift from what is served.
// Field documentation comes from `doc:"…"` struct tags and enumerations from
// `enum:"a,b"` tags. Decisions the spec leaves open are written here too.

// apiDescription is the document's introduction; the rules it states that
// have a constant in the code are written from it.
func apiDescription(throttle *ratelimit.Throttle) string {
	return `payd: a self-hostable multi-currency merchant payment service.

Conventions:
- Base address: {public_url}/api. Sandbox-only endpoints answer 404 in production.
- Authentication: headers app-id and secret-key, or an access token from GET /v1/payment_gateways/access_token sent as Authorization: Bearer <token> (or in the access-token header). Failures: 401 {"errors":{"code":"REQUIRE_LOGIN","message":"Not Authorised"}}. ` + throttleText(throttle) + `
- Errors: always {"errors":{"code","message"}}, plus "fields" (member → problem) on validation errors and "request_id" on 500 and 503. ` + errorCodesText + ` Statuses: 400 unreadable body or wrong JSON type (naming the member); 401; 403; 404 unknown or another merchant's id; 405 a known path with another method (METHOD_NOT_ALLOWED, with Allow); 409 state conflict or an idempotent request in flight; 413; 415; 422 a rule is broken; 429; 500 (INTERNAL, with request_id); 503 the database is unavailable for a moment (SERVICE_UNAVAILABLE, with Retry-After), or a sandbox clock advance's due work outlasted ` + clockWorkLimitText + ` (CLOCK_WORK_RUNNING, with Retry-After).
- Every response carries X-Request-Id (the caller's, when it sends a sane one).
- Amounts: requests take a JSON number or a decimal string, never read through a float. VND, JPY, XAF, KRW and XOF are rounded half away from zero to whole units and the recorded amount is returned; other currencies refuse more decimals than their ISO 4217 minor unit (422). Resource objects return decimal strings ("100.00"); balances and balance history return JSON numbers with the same digits.
- Times: responses are RFC 3339 UTC with milliseconds. Requests accept RFC 3339, offsets without a colon (+0000), and datetimes without an offset (UTC); date filters also take YYYY-MM-DD and DD/MM/YY, read in the merchant's time zone.
- Identifiers: v2 records have an 8-character upper-case base-36 uuid; balance records a 10-character Balance ID; v1 records an integer id.
- Idempotency: every POST and PUT honours Idempotency-Key (at most ` + strconv.Itoa(idempotency.MaxKeyLen) + ` characters, per merchant; a longer key, or one with a control character or broken UTF-8, is 422 VALIDATION_FAILED naming Idempotency-Key). The key is claimed in the transaction that makes the effect; a replay returns the stored status and body with Idempotent-Replayed: true; the same key with a different method, path or body is 422 IDEMPOTENCY_KEY_REUSED (a multipart/form-data body is compared on its fields and files, not its bytes, so a retry with a new boundary replays); a duplicate while the first runs is 409 IDEMPOTENCY_KEY_IN_USE. Responses under 500 are kept 8 days.
- Bodies: JSON up to 1 MiB unless an endpoint says otherwise; unknown members are ignored.
- Text: every string of a body, query parameter, path segment, form field, multipart part and CSV cell is UTF-8 without C0 control characters; tab, CR and LF are allowed only in ` + strings.Join(input.FreeText, ", ") + `. Anything else is 422 VALIDATION_FAILED naming the member, on every database.
- Created resources answer 201.
- Operations endpoints, at the root rather than under /api: GET /healthz (the process is up), GET /readyz (the database answers; 503 otherwise), GET /metrics (Prometheus).
- This document in a browser: GET /api/docs (Swagger UI, served by payd itself).`
}

// errorCodesText tells how each operation lists its error codes (errorResponse).
const errorCodesText = `Each operation lists, per status, every code it can answer: its own and those every operation of its kind shares (authentication and its throttle, reading and validating the request, idempotency, outages). Three ways, from one list: the response's description names each code and what it means (the list under each status in /api/docs); its schema restricts errors.code to those codes (an enum that a generated client can switch on and that answers are tested against); and it has an example of each code (the Examples menu in /api/docs).`

// throttleText states the authentication throttle's bounds (CONTRACT §2)
// from those of throttle, so the document cannot drift from what is enforced.
func throttleText(throttle *ratelimit.Throttle) string {
	return fmt.Sprintf("Failed authentications are counted per client address and app-id, and per client address alone, each over %s from its first failure: past %d with one app-id, or %d with any, each further failure is answered more slowly; past %d with one app-id, or %d with any, the client is refused with 429 RATE_LIMITED and Retry-After until that window ends. The throttle never refuses a request with valid credentials.",
		minutesText(throttle.Window), throttle.PerApp.SlowAfter, throttle.PerClient.SlowAfter, throttle.PerApp.RefuseAfter, throttle.PerClient.RefuseAfter)
}

// minutesText is d in the documents' words ("1 minute", "2.5 minutes").
func minutesText(d time.Duration) string {
	if d == time.Minute {
		return "1 minute"
	}
	return fmt.Sprintf("%g minutes", d.Minutes())
}

// openAPIDoc is the document's top level. It has no root security: each
// operation states its own. Like every object of the document, it leaves out
// a member it has nothing for: the schema language has no null for "none"
// (TestOpenAPIHasNoNull).
type openAPIDoc struct {
	OpenAPI    string                    `json:"openapi"`
	Info       map[string]any            `json:"info"`
	Servers    []map[string]any          `json:"servers,omitempty"`
	Paths      map[string]map[string]any `json:"paths"`
	Components map[string]map[string]any `json:"components,omitempty"`
	// Webhooks are the events payd POSTs to a record's webhook_notification.
	Webhooks map[string]map[string]any `json:"webhooks,omitempty"`
	// Tags group the operations (tags.go).
	Tags []map[string]any `json:"tags,omitempty"`
}

// event is one kind of webhook: its X-Event-Type values and its body.
type event struct {
	types   []string
	summary string
	// bodies are the body's shapes (one of them).
	bodies []any
}

// events lists every webhook payd sends (CONTRACT §3, §16). The body is the
// record as its detail endpoint returns it, except where said.
var events = []event{
	{[]string{"payin.pending", "payin.received", "payin.failed", "payin.expired", "payin.cancelled", "payin.return_pending", "payin.return_received", "payin.return_expired", "payin.pay_code"},
		"A payin changed status, or received its payment details (payin.pay_code).", []any{payin.Payin{}}},
	{[]string{"payout.held", "payout.scheduled", "payout.processing", "payout.completed", "payout.rejected", "payout.expired"},
		"A payout changed status (a v1 payout's body is its v1 record).", []any{payout.Payout{}, payout.V1Payout{}}},
	{[]string{"payout_transaction.done", "payout_transaction.failed", "payout_transaction.returned"},
		"One transaction of a payout settled, or a done one came back from the recipient's bank (returned: its amount and fee are back in available, failure_reason says why; the payout keeps its status): the body carries that transaction and its payout's ids, not the whole batch.", []any{payout.TransactionEvent{}}},
	{[]string{"kyc.pending", "kyc.approved", "kyc.failed"}, "A contact's KYC status changed.", []any{contact.Contact{}}},
	{[]string{"payment_request.pending", "payment_request.received", "payment_request.expired", "payment_request.return_pending",
		"payment_request.return_received", "payment_request.return_expired", "payment_request.return_rejected"},
		"A one-time PayID payment request was created or changed status (to its payment_request_notification).", []any{payid.PaymentRequest{}}},
	{[]string{"static_payid.payment"}, "A payment arrived in a static open PayID (to its customer_notification).", []any{payid.StaticPayment{}}},
	{[]string{"settlement.processing", "settlement.completed", "settlement.failed", "settlement.returned"},
		"A settlement was submitted or finished, or a completed one came back from the beneficiary's bank (returned: amount and fee back in available) (to its account's settlement config webhook_notification).", []any{settlement.Settlement{}}},
	{[]string{"transfer.held", "transfer.processing", "transfer.completed", "transfer.failed", "transfer.returned", "transfer.rejected", "transfer.expired"},
		"A transfer was created or finished, or a completed external one came back from the beneficiary's bank (returned: its amount back in available) (to its webhook_notification); an external transfer an approval policy caught is held, then processing when approved, or rejected or expired with its amount back in available.", []any{transfer.Transfer{}}},
	{[]string{report.EventCreated}, "A settlement report was made (to its account's settlement config webhook_notification); file_url is null: list the reports for a link.",
		[]any{report.Report{}}},
	{[]string{"gateway_payment.failed", "gateway_payment.paid", "gateway_payment.expired"},
		"A payment gateway (v1) payment changed status; sent to its payment_gateway_notification.", []any{gateway.Payment{}}},
	{[]string{"payin_link.failed", "payin_link.paid", "payin_link.expired"},
		"A Payment Gateway 3 payin link changed status; sent to its webhook_notification.", []any{gateway.Link{}}},
	{[]string{dispute.EventCreated, dispute.EventUpdated, dispute.EventClosed},
		"A card payment was disputed (created), the merchant submitted evidence (updated), or the dispute was decided: won, lost, accepted or unanswered by due_by (closed); to the payment's notification target.", []any{dispute.Dispute{}}},
	{[]string{webhook.EventEndpointDisabled}, "A webhook endpoint was disabled: it answered 410, or every delivery to it failed for 3 days (to the merchant's other endpoints).", []any{webhook.Endpoint{}}},
	{[]string{"ping"}, "POST /v2/webhooks/test.", []any{webhook.Ping{}}},
}

// webhooksSection documents events as OpenAPI 3.1 webhooks.
func webhooksSection(g *schemaGen) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, e := range events {
		var schema map[string]any
		if len(e.bodies) == 1 {
			schema = g.schema(reflect.TypeOf(e.bodies[0]))
		} else {
			var shapes []any
			for _, b := range e.bodies {
				shapes = append(shapes, g.schema(reflect.TypeOf(b)))
			}
			schema = map[string]any{"oneOf": shapes}
		}
		// Each event type is a webhook of its own, titled by it; the types
		// of one group share their summary and body.
		for _, typ := range e.types {
			out[typ] = map[string]any{"post": map[string]any{
				"operationId":   "webhook_" + strings.ReplaceAll(typ, ".", "_"),
				"security":      []map[string][]string{{"webhookSignature": {}}},
				"summary":       typ + ": " + e.summary,
				"x-event-types": []string{typ},
				"description":   "Sent with X-Event-Type " + typ + ". Headers: Authorization (the webhook_notification's authorization_header, verbatim), webhook-id (stable across retries), webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of id.timestamp.body with the merchant's signing secret). A 2xx ends the delivery; anything else is retried for about three days (Retry-After honoured, 410 stops it). One record's events arrive in the order they were emitted: the next is sent only once the one before was delivered or has failed for good.",
				"requestBody":   map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": schema}}},
				"responses":     map[string]any{"200": map[string]any{"description": "Any 2xx: delivered."}},
			}}
		}
	}
	return out
}

// openAPI serves the document of this API's routes (a production server
// documents no sandbox routes), built once.
func (a *API) openAPI(w http.ResponseWriter, r *http.Request) {
	writeBody(w, http.StatusOK, a.document())
}

// document is the OpenAPI document of this API's routes, built once.
func (a *API) document() []byte {
	a.openAPIOnce.Do(func() { a.openAPIBody, _ = json.MarshalIndent(a.buildOpenAPI(), "", "  ") })
	return a.openAPIBody
}

// Document is the OpenAPI document env's API serves at /api/openapi.json,
// built from the route table alone (no database, no server), so that the
// official clients can be generated from it (client/).
func Document(env Environment) []byte {
	return New(Deps{Env: env, Metrics: NewMetrics()}).document()
}

// buildOpenAPI renders the route table as an OpenAPI 3.1 document.
func (a *API) buildOpenAPI() openAPIDoc {
	g := &schemaGen{schemas: map[string]any{}}
	detailRef := g.schema(reflect.TypeOf(errorDetail{}))
	doc := openAPIDoc{
		OpenAPI: "3.1.0",
		Info:    map[string]any{"title": "payd API", "version": "2.0.0", "description": apiDescription(a.throttle)},
		Servers: []map[string]any{{"url": "/api", "description": "payd serves the API under {public_url}/api"}},
		Paths:   map[string]map[string]any{},
		Components: map[string]map[string]any{
			"schemas": g.schemas,
			"securitySchemes": {
				"appId":       map[string]any{"type": "apiKey", "in": "header", "name": "app-id"},
				"secretKey":   map[string]any{"type": "apiKey", "in": "header", "name": "secret-key"},
				"bearer":      map[string]any{"type": "http", "scheme": "bearer"},
				"accessToken": map[string]any{"type": "apiKey", "in": "header", "name": "access-token"},
				"webhookSignature": map[string]any{"type": "apiKey", "in": "header", "name": "webhook-signature",
					"description": "Webhooks only (payd sends it; no API operation takes it): v1,<base64 HMAC-SHA256 of webhook-id.webhook-timestamp.body with the merchant's signing secret>, by which a receiver knows a delivery is payd's."},
			},
		},
	}
	doc.Webhooks = webhooksSection(g)
	doc.Tags = a.tagsSection()
	// A broken example file fails TestOpenAPIExamples; the document is
	// served without examples rather than not at all.
	recorded, _ := examples()
	for _, rt := range a.routes {
		path := rt.path
		if rt.raw {
			continue // operations endpoints are outside the API; the description lists them
		}
		op := map[string]any{"summary": rt.summary, "operationId": operationID(rt)}
		if rt.description != "" {
			op["description"] = rt.description
		}
		op["tags"] = []string{tagOf(rt)}
		if scope := scopeOf(rt); scope != "" {
			op["x-required-scope"] = scope
		}
		op["security"] = security(rt.auth)
		var params []map[string]any
		for _, p := range rt.params {
			params = append(params, map[string]any{"name": p.name, "in": "query", "required": p.required,
				"description": p.doc, "schema": map[string]any{"type": p.typ}})
		}
		if rt.method == http.MethodPost || rt.method == http.MethodPut {
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "required": false,
				"description": "Makes a retry safe (at most 255 characters).", "schema": map[string]any{"type": "string", "maxLength": 255}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.body != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.body))}}}
		}
		if rt.form != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"multipart/form-data": map[string]any{"schema": formSchema(rt.form)}}}
		}
		if len(rt.headers) > 0 {
			headers := map[string]any{}
			for k, v := range rt.headers {
				headers[k] = map[string]any{"schema": map[string]any{"type": "string", "enum": []string{v}}}
			}
			op["x-response-headers"] = headers
		}
		responses := map[string]any{}
		ok := map[string]any{"description": "Success."}
		if rt.response != nil {
			media := rt.contentType
			if media == "" {
				media = "application/json"
			}
			ok["content"] = map[string]any{media: map[string]any{"schema": g.schema(reflect.TypeOf(rt.response))}}
		}
		responses[strconv.Itoa(rt.status)] = ok
		if rt.repeatStatus != 0 {
			responses[strconv.Itoa(rt.repeatStatus)] = ok
		}
		for status, codes := range routeErrors(rt) {
			responses[strconv.Itoa(status)] = errorResponse(status, codes, detailRef)
		}
		op["responses"] = responses
		if ex, ok := recorded[operationID(rt)]; ok {
			addExamples(op, ex)
		}
		if doc.Paths[path] == nil {
			doc.Paths[path] = map[string]any{}
		}
		doc.Paths[path][strings.ToLower(rt.method)] = op
	}
	return doc
}

// errorResponse documents one error status of an operation: the codes it
// answers there, three ways (errorCodesText tells readers): its description
// lists them with what each means, its schema is the error envelope with
// errors.code restricted to them, and it has an example of each. The
// restriction sits beside the ErrorDetail reference, in an allOf of errors
// itself, so that no branch of the schema meets a member it does not know
// (Redocly's strict example check reads each object branch on its own).
func errorResponse(status int, codes []errorCode, detailRef map[string]any) map[string]any {
	names := make([]string, len(codes))
	lines := make([]string, len(codes))
	examples := map[string]any{}
	for i, c := range codes {
		names[i] = c.code
		lines[i] = "- " + c.code + ": " + c.meaning
		examples[c.code] = map[string]any{"summary": c.meaning, "value": errorExample(c)}
	}
	only := map[string]any{"properties": map[string]any{"code": map[string]any{"type": "string", "enum": names}}}
	envelope := map[string]any{"type": "object", "required": []string{"errors"}, "properties": map[string]any{
		"errors": map[string]any{"allOf": []any{detailRef, only}}}}
	return map[string]any{
		"description": http.StatusText(status) + ". Codes:\n" + strings.Join(lines, "\n"),
		"content": map[string]any{"application/json": map[string]any{
			"schema":   envelope,
			"examples": examples,
		}},
	}
}

// errorExample is an answer with code c as payd writes it.
func errorExample(c errorCode) errorBody {
	d := errorDetail{Code: c.code, Message: c.meaning}
	switch {
	case c.status >= 500:
		d.RequestID = "5f2b7c1e9a4d4c3b"
	case c.code == fault.CodeValidation && c.status == http.StatusUnprocessableEntity:
		d.Message = "<member> <what is wrong with it>"
		d.Fields = map[string]string{"<member>": "<what is wrong with it>"}
	}
	return errorBody{Errors: d}
}

// formSchema describes a multipart body: text parts as strings, files as binary.
func formSchema(parts []formPart) map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range parts {
		s := map[string]any{"type": "string", "description": p.doc}
		if p.file {
			s["format"] = "binary"
		}
		props[p.name] = s
		if p.required {
			required = append(required, p.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func operationID(rt route) string {
	s := strings.NewReplacer("/", "_", ".", "_").Replace(strings.Trim(rt.path, "/"))
	return strings.ToLower(rt.method) + "_" + s
}

func security(mode authMode) []map[string][]string {
	switch mode {
	case authKeys:
		return []map[string][]string{{"appId": {}, "secretKey": {}}, {"bearer": {}}, {"accessToken": {}}}
	case authKeysOnly:
		return []map[string][]string{{"appId": {}, "secretKey": {}}}
	case authTokenHeader:
		return []map[string][]string{{"accessToken": {}}}
	}
	return []map[string][]string{}
}

// schemaGen turns Go types into JSON Schema, naming struct types as components.
type schemaGen struct {
	schemas map[string]any
}

var (
	stringAmountType = reflect.TypeOf(money.String{})
	numberAmountType = reflect.TypeOf(money.Number{})
	timeOutType      = reflect.TypeOf(clock.Time{})
	rawJSONType      = reflect.TypeOf(json.RawMessage{})
)

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	if t.Kind() == reflect.Struct && t.Implements(oneOfType) {
		var shapes []any
		for _, v := range reflect.Zero(t).Interface().(oneOfResponse).oneOfShapes() {
			shapes = append(shapes, g.schema(reflect.TypeOf(v)))
		}
		return map[string]any{"oneOf": shapes}
	}
	switch t {
	case amountType:
		return map[string]any{"oneOf": []any{map[string]any{"type": "number"}, map[string]any{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]+)?$`}},
			"description": "A JSON number or a decimal string, in the currency's units (100.50)."}
	case stringAmountType:
		return map[string]any{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]+)?$`, "description": "Decimal with the currency's precision."}
	case numberAmountType:
		return map[string]any{"type": "number"}
	case timeOutType:
		return map[string]any{"type": "string", "format": "date-time", "example": "2024-07-29T15:51:28.071Z"}
	case timeType:
		return map[string]any{"type": "string", "description": "RFC 3339 (Z or ±hh:mm), an offset without a colon (+0000), or a datetime without an offset (read as UTC).",
			"example": "2024-12-31T23:59:59.000+0000"}
	case rawJSONType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.schema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		// null reads as an empty list (encoding/json); answers send [].
		return map[string]any{"type": []string{"array", "null"}, "items": g.schema(t.Elem())}
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		return g.structSchema(t)
	}
	return map[string]any{}
}

func (g *schemaGen) structSchema(t reflect.Type) map[string]any {
	name := componentName(t)
	ref := map[string]any{"$ref": "#/components/schemas/" + name}
	if _, ok := g.schemas[name]; ok {
		return ref
	}
	g.schemas[name] = map[string]any{} // placeholder against recursion
	g.schemas[name] = g.structObject(t)
	return ref
}

// structObject is the object schema of struct type t, its members inline.
func (g *schemaGen) structObject(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's members are the outer object's
			// (encoding/json); it is no component of its own.
			inner := g.structObject(f.Type)
			for k, v := range inner["properties"].(map[string]any) {
				props[k] = v
			}
			if req, ok := inner["required"].([]string); ok {
				required = append(required, req...)
			}
			continue
		}
		jsonName, opts, _ := strings.Cut(tag, ",")
		if jsonName == "" {
			jsonName = f.Name
		}
		s := g.schema(f.Type)
		if _, isRef := s["$ref"]; isRef && (f.Tag.Get("doc") != "" || f.Tag.Get("enum") != "") {
			s = map[string]any{"allOf": []any{s}}
		}
		if d := f.Tag.Get("doc"); d != "" {
			s["description"] = d
		}
		if e := f.Tag.Get("enum"); e != "" {
			s["enum"] = strings.Split(e, ",")
		}
		if ex := f.Tag.Get("example"); ex != "" {
			s["examples"] = []any{exampleValue(ex, f.Type)}
		}
		if f.Type.Kind() == reflect.Pointer {
			s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
		props[jsonName] = s
		if f.Tag.Get("required") == "true" || (!strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer) {
			required = append(required, jsonName)
		}
	}
	sort.Strings(required)
	obj := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		obj["required"] = required
	}
	return obj
}

// exampleValue reads the `example:"…"` tag of a member of type t: the text
// itself for a string ("24.95" is no number there), else JSON when it parses
// as JSON (a number, an object), else the text.
func exampleValue(tag string, t reflect.Type) any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.String {
		return tag
	}
	var v any
	if err := json.Unmarshal([]byte(tag), &v); err == nil {
		return v
	}
	return tag
}

// componentName names a struct type in the document: package and type, in
// CamelCase (deposit.Request → DepositRequest), without saying the package
// twice (payin.Payin → Payin, contact.ContactChanges → ContactChanges).
func componentName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	name := t.Name()
	if base, arg, generic := strings.Cut(name, "["); generic {
		// pageList[payd/internal/payin.Payin] → PayinPageList
		arg = strings.TrimSuffix(arg, "]")
		argPkg, argName, _ := strings.Cut(arg[strings.LastIndex(arg, "/")+1:], ".")
		return qualified(argPkg, argName) + strings.ToUpper(base[:1]) + base[1:]
	}
	if pkg == "httpapi" {
		return strings.ToUpper(name[:1]) + name[1:]
	}
	return qualified(pkg, name)
}

// qualified is a package's type name prefixed by the package, unless the
// name starts with it already.
func qualified(pkg, name string) string {
	prefix := strings.ToUpper(pkg[:1]) + pkg[1:]
	if strings.HasPrefix(name, prefix) {
		return name
	}
	return prefix + name
}

// oneOfResponse is a response type that stands for one of several shapes
// (an endpoint that answers a record or a list depending on its query).
type oneOfResponse interface{ oneOfShapes() []any }

var oneOfType = reflect.TypeOf((*oneOfResponse)(nil)).Elem()
