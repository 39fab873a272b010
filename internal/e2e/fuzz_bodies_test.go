package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"payd/internal/httpapi"
	"payd/internal/input"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files: the seed-* files of testdata/fuzz/FuzzJSONBodies (from jsonBodyRoutes) and the OpenAPI examples under internal/httpapi/testdata/examples (recorded from the exchanges of the tests that run)")

// countedTables are the tables whose row counts show whether a request wrote
// anything: every table of the schema but the migration log. The tests that
// say "nothing written" compare them before and after; a table the schema
// gains must be added here (FuzzJSONBodies fails until it is).
var countedTables = []string{
	"merchants", "accounts", "apps", "access_tokens", "users", "secrets",
	"ledger_buckets", "journal_entries", "postings", "balance_records", "deposits",
	"payins", "payin_refunds", "payouts", "payout_transactions", "rail_submissions",
	"webhook_events", "webhook_attempts",
	"contacts", "customers", "kyc_submissions", "kyc_documents", "verification_messages", "verification_tokens",
	"jobs", "idempotency_keys", "global_keys",
	"payids", "payment_requests", "static_payids", "static_payid_payments",
	"portal_sessions", "portal_login_failures", "portal_oidc_logins", "portal_invites", "audit_log",
	"settlement_configs", "settlements", "gateway_payments", "treasury_submissions", "transfers", "payin_links",
	"reports", "report_signing_keys",
	"rails", "rail_methods", "bank_files", "operator_audit",
	"bank_exceptions", "inbox_files", "inbox_entries", "feeds", "feed_entries",
	"reconciliation_statements", "reconciliation_lines",
	"events", "event_streams", "webhook_endpoints", "webhook_endpoint_events",
	"approval_policies", "approvals",
	"disputes", "dispute_files", "card_refunds",
}

// uncountedTables are left out of the counts: the migration log, and the
// request limits' state, which every request may touch (a refused one too).
var uncountedTables = []string{"schema_migrations", "auth_failures", "rate_buckets"}

// rowCounts is the number of rows of each counted table.
type rowCounts map[string]int64

func countRows(ctx context.Context, db *store.DB) (rowCounts, error) {
	out := rowCounts{}
	for _, table := range countedTables {
		var n int64
		if err := db.Read().QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", table, err)
		}
		out[table] = n
	}
	return out, nil
}

// changed names the tables whose counts differ, with both counts.
func (before rowCounts) changed(after rowCounts) []string {
	var out []string
	for _, table := range countedTables {
		if before[table] != after[table] {
			out = append(out, fmt.Sprintf("%s %d→%d", table, before[table], after[table]))
		}
	}
	return out
}

// wantCountedTablesCoverSchema fails unless countedTables and
// uncountedTables together name exactly the tables of p's SQLite database.
func wantCountedTablesCoverSchema(t testing.TB, p *payd) {
	t.Helper()
	rows, err := p.srv.DB.Read().QueryContext(context.Background(), `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	defer rows.Close()
	var schema []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		schema = append(schema, name)
	}
	known := slices.Sorted(slices.Values(slices.Concat(countedTables, uncountedTables)))
	if slices.Sort(schema); !slices.Equal(schema, known) {
		t.Fatalf("schema tables %v\nbut countedTables and uncountedTables name %v", schema, known)
	}
}

// startQuiet runs payd's HTTP API on dsn without its job workers and webhook
// dispatcher, so that every row that changes is changed by a request (due
// jobs still run inside POST /v2/sandbox/clock). Tests that count rows
// around a request need that quiet: a worker finishing a job would look
// like a write.
func startQuiet(t testing.TB, dsn string) *payd {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	root := "http://" + ln.Addr().String()
	srv, err := server.Open(context.Background(), server.Config{DB: dsn, Env: httpapi.Sandbox, PublicURL: root,
		StoreOptions: store.Options{SQLiteSynchronous: "NORMAL"}})
	if err != nil {
		ln.Close()
		t.Fatalf("open payd: %v", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		hs.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		srv.Close()
	})
	return &payd{t: t, srv: srv, base: root + "/api", root: root}
}

// jsonBodyRoute is an endpoint that takes a JSON body, with a body that it
// accepts once the placeholders are filled.
type jsonBodyRoute struct {
	op    string // "POST /v2/payins", as the OpenAPI document names it
	valid string
}

// jsonBodyRoutes are the endpoints with a JSON body that every sandbox
// serves. Their positions are the route index of the checked-in corpus:
// append, never reorder. Endpoints the OpenAPI document adds are fuzzed
// after these.
var jsonBodyRoutes = []jsonBodyRoute{
	{"POST /v1/simulate_deposit", `{"account_number":"$ACCOUNT","amount":"250","remitter_name":"Jane Doe","remarks":"seed deposit"}`},
	{"POST /v2/sandbox/clock", `{"advance_seconds":60}`},
	{"POST /v2/webhooks/deliveries/resend", `{"id":"$WEBHOOK_ID"}`},
	{"POST /v2/webhooks/test", `{"endpoint_url":"$RECEIVER","authorization_header":"Bearer seed"}`},
	{"POST /v2/contacts", `{"email":"new.contact@example.com","first_name":"Jane","last_name":"Doe","type":"individual","dob":"1990-02-28","phone":"+61 412 345 678","gender":"female","street":"1 George St","city":"Sydney","postal_code":"2000","state":"NSW","country":"AU"}`},
	{"PUT /v2/contact/update_info", `{"email":"$CONTACT_EMAIL","city":"Perth","phone":"+61 400 000 000","country":"au"}`},
	{"POST /v2/contacts/resend_verification", `{"email":"$CONTACT_EMAIL","resend_to":"email"}`},
	{"POST /v2/customers", `{"first_name":"Jane","last_name":"Doe","email":"jane@example.com","phone":"+61412345678","external_id":"cus_seed","country":"AU","metadata":{"tier":"gold"}}`},
	{"PUT /v2/customers/update", `{"id":"$CUSTOMER_ID","city":"Perth","external_id":"cus_changed","metadata":{"tier":"silver"}}`},
	{"POST /v2/payins", `{"currency":"IDR","amount":100000,"payin_method_name":"id_bank_qris_idr","name":"Jane Payer","email":"jane@example.com","external_id":"order-1","description":"order 42","payin_method_params":{},"webhook_notification":{"endpoint_url":"$RECEIVER","authorization_header":"Bearer seed"},"expired_at":"$FUTURE","metadata":{"order":"42"}}`},
	{"POST /v2/payins/bank/confirm_otp", `{"uuid":"$OTP_PAYIN","code":"123456"}`},
	{"POST /v2/payins/confirm_otp", `{"uuid":"$OTP_PAYIN","code":"123456"}`},
	{"POST /v2/payins/simulate", `{"uuid":"$PAYIN","status":"completed","amount":"100000"}`},
	{"POST /v2/payins/refund", `{"uuid":"$RECEIVED_PAYIN","amount":"1000","description":"seed refund"}`},
	{"POST /v2/payins/cancel", `{"uuid":"$PAYIN"}`},
	{"POST /v2/payouts", `{"currency":"AUD","payout_method_name":"au_bank_aud","description":"seed payout","external_id":"$FUNDED_AUD","webhook_notification":{"endpoint_url":"$RECEIVER"},"payout_transaction_details":[{"first_name":"Jane","last_name":"Doe","email":"jane@example.com","amount":"10.50","external_id":"tx-1","payout_method_params":{"bsb":"062000","account_number":"12345678","account_name":"Jane Doe"}}]}`},
}

// moreValidBodies reach the other families of a route (route index → bodies).
var moreValidBodies = map[int][]string{
	1: {`{"now":"$FUTURE"}`, `{"advance_seconds":0}`},
	9: {
		`{"currency":"GHS","amount":"50","payin_method_name":"gh_mobile_money_ghs","payin_method_params":{"phone":"+233241234567"}}`,
		`{"currency":"AUD","amount":100,"gst":true,"email":"$CONTACT_EMAIL","payin_method_name":"au_payid_npp_aud","payin_method_params":{"callback_url":"https://shop.example/return"}}`,
		`{"currency":"KRW","amount":50000,"email":"$KYC_EMAIL","payin_method_name":"kr_bank_va_kyc_krw","payin_method_params":{"user_name":"Kim Minjun","phone":"+821012345678"}}`,
		`{"currency":"PHP","amount":500,"payin_method_name":"ph_ewallet_gcash_php","payin_method_params":{"callback_url":"https://shop.example/return"}}`,
		`{"currency":"JPY","amount":5000,"payin_method_name":"jp_bank_jpy","payin_method_params":{"user_id":"user-77","user_name":"yamada.taro","ip_address":"203.0.113.8","first_name":"タロウ","last_name":"ヤマダ","phone":"+819012345678","email":"taro@example.jp"}}`,
	},
	12: {`{"uuid":"$PAYIN","status":"failed"}`},
	13: {`{"uuid":"$RECEIVED_PAYIN","amount":99300,"description":"refund what is available"}`},
	5:  {`{"email":"$KYC_EMAIL","type":"organization","reg_no":"ACN 000 000 019"}`},
}

// moreBodies are other bodies worth a seed: records of another merchant,
// rules that refuse (route index → bodies).
var moreBodies = map[int][]string{
	0:  {`{"account_number":"$FOREIGN_ACCOUNT","amount":1}`},
	12: {`{"uuid":"$FOREIGN_PAYIN","status":"completed"}`},
	13: {`{"uuid":"$RECEIVED_PAYIN","description":"refund everything"}`, `{"uuid":"$FOREIGN_PAYIN","description":"not mine"}`},
	14: {`{"uuid":"$FOREIGN_PAYIN"}`, `{"uuid":"$RECEIVED_PAYIN"}`},
	10: {`{"uuid":"$OTP_PAYIN","code":"000000"}`, `{"uuid":"$PAYIN","code":"123456"}`},
}

// jsonMember is one member of a JSON object, its value raw.
type jsonMember struct {
	name  string
	value json.RawMessage
}

// objectMembers reads the members of a JSON object in order.
func objectMembers(body string) ([]jsonMember, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%s is not a JSON object", body)
	}
	var out []jsonMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, jsonMember{name: tok.(string), value: v})
	}
	return out, nil
}

// jsonObject writes members as a JSON object (values as they are, valid or not).
func jsonObject(members []jsonMember) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoteKey(m.name))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.String()
}

// quoteKey is s as a JSON string.
func quoteKey(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// eachMember returns members with every value replaced by change(value).
func eachMember(members []jsonMember, change func(json.RawMessage) string) []jsonMember {
	out := make([]jsonMember, len(members))
	for i, m := range members {
		out[i] = jsonMember{name: m.name, value: json.RawMessage(change(m.value))}
	}
	return out
}

// oneMember returns members with member i's value replaced.
func oneMember(members []jsonMember, i int, value string) []jsonMember {
	out := slices.Clone(members)
	out[i] = jsonMember{name: members[i].name, value: json.RawMessage(value)}
	return out
}

// wrongType is a value of another JSON type than v.
func wrongType(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return `12345`
	case '{':
		return `"an object was expected"`
	case '[':
		return `{"an":"array was expected"}`
	case 't', 'f':
		return `"true"`
	case 'n':
		return `false`
	}
	return `{"n":1}`
}

// upperNames returns members with their names upper-cased.
func upperNames(members []jsonMember) []jsonMember {
	out := make([]jsonMember, len(members))
	for i, m := range members {
		out[i] = jsonMember{name: strings.ToUpper(m.name), value: m.value}
	}
	return out
}

// inString rewrites the string values of members (others are kept) as
// the JSON string literal of f(old literal's contents).
func inString(f func(string) string) func(json.RawMessage) string {
	return func(v json.RawMessage) string {
		if v[0] != '"' {
			return string(v)
		}
		return `"` + f(string(v[1:len(v)-1])) + `"`
	}
}

// numericJSON matches a number or a string of a decimal number (amounts).
var numericJSON = regexp.MustCompile(`^"?-?[0-9]+(\.[0-9]+)?"?$`)

// bodySeed is one checked-in input of FuzzJSONBodies.
type bodySeed struct {
	name        string
	route       byte
	body        string
	contentType string
}

// jsonBodySeeds derives the seed corpus from jsonBodyRoutes: for each route
// its valid bodies, the content types, the shapes that are not an object,
// and, member by member, wrong types, huge numbers, nulls, arrays and
// objects for scalars, invalid UTF-8, deep nesting and a 2 MB value.
func jsonBodySeeds() ([]bodySeed, error) {
	var out []bodySeed
	for i, rt := range jsonBodyRoutes {
		route := byte(i)
		slug := strings.NewReplacer(" ", "", "/", "_").Replace(strings.ToLower(rt.op))
		add := func(kind, body, contentType string) {
			out = append(out, bodySeed{name: fmt.Sprintf("seed-%02d-%s-%s", i, slug, kind), route: route, body: body, contentType: contentType})
		}
		members, err := objectMembers(rt.valid)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rt.op, err)
		}
		v := rt.valid
		add("valid", v, "application/json")
		for j, more := range moreValidBodies[i] {
			add(fmt.Sprintf("valid-%d", j+2), more, "application/json")
		}
		for j, more := range moreBodies[i] {
			add(fmt.Sprintf("other-%d", j+1), more, "application/json")
		}
		add("no-content-type", v, "")
		add("charset", v, "application/json; charset=utf-8")
		add("plus-json", v, "application/merchant+json")
		add("text-plain", v, "text/plain")
		add("form-urlencoded", v, "application/x-www-form-urlencoded")
		add("bad-media-type", v, `application/json; charset="`)
		add("empty-object", `{}`, "application/json")
		add("empty-body", ``, "application/json")
		add("whitespace", " \r\n\t", "application/json")
		add("null", `null`, "application/json")
		add("string", `"`+strings.ReplaceAll(v, `"`, `\"`)+`"`, "application/json")
		add("number", `1e400`, "application/json")
		add("array-of-valid", `[`+v+`]`, "application/json")
		add("empty-array", `[]`, "application/json")
		add("trailing-object", v+`{}`, "application/json")
		add("trailing-garbage", v+`x`, "application/json")
		add("truncated", v[:len(v)/2], "application/json")
		add("bom", "\xef\xbb\xbf"+v, "application/json")
		add("duplicate-members", jsonObject(slices.Concat(members, eachMember(members, wrongType))), "application/json")
		add("upper-case-names", jsonObject(upperNames(members)), "application/json")
		add("all-null", jsonObject(eachMember(members, func(json.RawMessage) string { return `null` })), "application/json")
		add("all-empty-strings", jsonObject(eachMember(members, func(json.RawMessage) string { return `""` })), "application/json")
		add("all-wrong-types", jsonObject(eachMember(members, wrongType)), "application/json")
		add("all-arrays", jsonObject(eachMember(members, func(v json.RawMessage) string { return `[` + string(v) + `]` })), "application/json")
		add("all-objects", jsonObject(eachMember(members, func(v json.RawMessage) string { return `{"value":` + string(v) + `}` })), "application/json")
		add("all-huge-integers", jsonObject(eachMember(members, func(json.RawMessage) string { return `123456789012345678901234567890123456789` })), "application/json")
		add("all-huge-exponents", jsonObject(eachMember(members, func(json.RawMessage) string { return `1e400` })), "application/json")
		add("all-negative", jsonObject(eachMember(members, func(json.RawMessage) string { return `-9223372036854775809` })), "application/json")
		add("all-tiny", jsonObject(eachMember(members, func(json.RawMessage) string { return `-0.0000000000000000000001` })), "application/json")
		add("invalid-utf8", jsonObject(eachMember(members, inString(func(s string) string { return s + "\xff\xfe\xc3\x28" }))), "application/json")
		add("invalid-utf8-name", "{\"\xff\xfe\":1,"+v[1:], "application/json")
		add("nul-and-surrogates", jsonObject(eachMember(members, inString(func(s string) string { return s + `\u0000\ud800\udfff` }))), "application/json")
		add("long-strings", jsonObject(eachMember(members, inString(func(string) string { return strings.Repeat("é", 5000) }))), "application/json")
		add("padded-under-limit", jsonObject(append(slices.Clone(members), jsonMember{"padding", json.RawMessage(`"$MB"`)})), "application/json")
		add("2mb-unknown-member", jsonObject(append(slices.Clone(members), jsonMember{"padding", json.RawMessage(`"$BIG"`)})), "application/json")
		add("2mb-first-member", jsonObject(oneMember(members, 0, `"$BIG"`)), "application/json")
		add("deep-nesting", `$DEEP`, "application/json")
		add("deep-first-member", jsonObject(oneMember(members, 0, `$DEEP`)), "application/json")
		for j, m := range members {
			add("wrong-type-"+m.name, jsonObject(oneMember(members, j, wrongType(m.value))), "application/json")
			add("huge-"+m.name, jsonObject(oneMember(members, j, `99999999999999999999999999999999`)), "application/json")
			add("null-"+m.name, jsonObject(oneMember(members, j, `null`)), "application/json")
			if m.value[0] == '"' {
				add("nul-"+m.name, jsonObject(oneMember(members, j, inString(func(s string) string { return s + `\u0000` })(m.value))), "application/json")
				add("control-"+m.name, jsonObject(oneMember(members, j, inString(func(s string) string { return `\u001b` + s })(m.value))), "application/json")
			}
			if numericJSON.Match(m.value) {
				add("huge-string-"+m.name, jsonObject(oneMember(members, j, `"99999999999999999999999999999999.99"`)), "application/json")
				add("fraction-"+m.name, jsonObject(oneMember(members, j, `"0.000000000000000000001"`)), "application/json")
				add("negative-"+m.name, jsonObject(oneMember(members, j, `-1`)), "application/json")
			}
		}
	}
	return out, nil
}

// routeBody is a body sent to the route of an index.
type routeBody struct {
	route int
	body  string
}

// validBodies are the bodies each route must accept: with their
// placeholders filled, they reach past validation to the effect.
func validBodies() map[routeBody]bool {
	out := map[routeBody]bool{}
	for i, rt := range jsonBodyRoutes {
		out[routeBody{i, rt.valid}] = true
		for _, body := range moreValidBodies[i] {
			out[routeBody{i, body}] = true
		}
	}
	return out
}

// corpusFile is a seed in the `go test fuzz v1` format.
func corpusFile(s bodySeed) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\nbyte(%q)\n[]byte(%q)\nstring(%q)\n", s.route, s.body, s.contentType)
}

// checkSeedCorpus writes (with -update) or checks the corpus files of
// the seeds: the checked-in corpus must hold every seed of the table.
func checkSeedCorpus(f *testing.F, seeds []bodySeed) {
	f.Helper()
	dir := filepath.Join("testdata", "fuzz", "FuzzJSONBodies")
	if *update {
		old, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
		for _, name := range old {
			os.Remove(name)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range seeds {
		name := filepath.Join(dir, s.name)
		if *update {
			if err := os.WriteFile(name, corpusFile(s), 0o644); err != nil {
				f.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, corpusFile(s)) {
			f.Fatalf("corpus file %s is missing or stale (%v); run go test ./internal/e2e/ -run FuzzJSONBodies -args -update", name, err)
		}
	}
}

// jsonBodyOps reads the operations of the OpenAPI document whose request
// body is application/json, as "METHOD /path".
func jsonBodyOps(p *payd) []string {
	p.t.Helper()
	var out []string
	for path, ops := range p.openAPI().Paths {
		for method, op := range ops {
			if op.RequestBody != nil && op.RequestBody.Content["application/json"].Schema != nil {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// fuzzRoutes is jsonBodyRoutes followed by the other JSON-body operations
// of the document; it fails if the document lacks one of jsonBodyRoutes.
func fuzzRoutes(f *testing.F, p *payd) []string {
	f.Helper()
	documented := jsonBodyOps(p)
	var out []string
	for _, rt := range jsonBodyRoutes {
		if !slices.Contains(documented, rt.op) {
			f.Fatalf("%s is no longer documented with a JSON body; the document has %v", rt.op, documented)
		}
		out = append(out, rt.op)
	}
	for _, op := range documented {
		if !slices.Contains(out, op) {
			out = append(out, op)
		}
	}
	return out
}

// Placeholders of FuzzJSONBodies inputs, filled with records of a merchant
// made for the input. Only the placeholders a body holds are made.
const (
	phAccount        = "$ACCOUNT"         // the IDR payments account number
	phPayin          = "$PAYIN"           // a pending IDR QR payin
	phReceivedPayin  = "$RECEIVED_PAYIN"  // a received (refundable) IDR payin
	phOTPPayin       = "$OTP_PAYIN"       // a GHS mobile money payin at stage authorize_otp
	phContactEmail   = "$CONTACT_EMAIL"   // a contact without KYC
	phKYCEmail       = "$KYC_EMAIL"       // a contact whose KYC is approved
	phCustomerID     = "$CUSTOMER_ID"     // a customer
	phWebhookID      = "$WEBHOOK_ID"      // a ping event
	phReceiver       = "$RECEIVER"        // a webhook receiver URL the sandbox accepts
	phFuture         = "$FUTURE"          // an hour ahead on the merchant's clock
	phFundedAUD      = "$FUNDED_AUD"      // an external id; the AUD account gets 1,000 available first
	phForeignPayin   = "$FOREIGN_PAYIN"   // another merchant's pending payin
	phForeignAccount = "$FOREIGN_ACCOUNT" // another merchant's account number
	phBig            = "$BIG"             // 2 MiB of text: past every JSON body bound
	phMB             = "$MB"              // 1,000,000 bytes of text: under the 1 MiB bound
	phDeep           = "$DEEP"            // arrays nested 100,001 deep
)

// fuzzCurrencies are the currencies of each input's merchant; the caller is
// the app of the body's currency member, IDR when there is none.
var fuzzCurrencies = []string{"IDR", "GHS", "AUD", "KRW", "PHP", "JPY"}

// bodyFixture makes the records an input's placeholders name.
type bodyFixture struct {
	t    *testing.T
	p    *payd
	apps map[string]creds
}

// value makes the record placeholder names and returns its identifier.
func (fx bodyFixture) value(placeholder string) string {
	t, p, idr := fx.t, fx.p, fx.apps["IDR"]
	switch placeholder {
	case phAccount:
		return idr.AccountNumber
	case phPayin:
		return str(pinCreate(t, p, idr, pinBody("IDR", "id_bank_qris_idr", 100000)), "uuid")
	case phReceivedPayin:
		return pinReceived(t, p, idr, nil, "")
	case phOTPPayin:
		ghs := fx.apps["GHS"]
		return str(pinCreate(t, p, ghs, pinBody("GHS", "gh_mobile_money_ghs", 50)), "uuid")
	case phContactEmail:
		return str(p.newContact(idr, "payer@example.com", nil), "email")
	case phKYCEmail:
		const email = "kyc.payer@example.com"
		p.newContact(idr, email, nil)
		want(t, p.submitKYC(idr, kycFields(email, "N1234567"), kycFiles(t)), 200)
		return email
	case phCustomerID:
		return str(p.newCustomer(idr, customerFields("cus_fixture")), "uuid")
	case phWebhookID:
		r := p.post("/v2/webhooks/test", idr, map[string]any{"endpoint_url": "http://127.0.0.1:9/hook"})
		want(t, r, 201)
		return str(r.JSON(t), "id")
	case phFundedAUD:
		aud := fx.apps["AUD"]
		p.simulateDeposit(aud, aud.AccountNumber, 1000)
		p.runDue(aud)
		return "batch-funded"
	case phReceiver:
		return "http://127.0.0.1:9/hook"
	case phFuture:
		return p.clockNow(idr).Add(time.Hour).UTC().Format(time.RFC3339Nano)
	case phBig:
		return strings.Repeat("x", 2<<20)
	case phMB:
		return strings.Repeat("x", 1_000_000)
	case phDeep:
		return strings.Repeat("[", 100_001) + strings.Repeat("]", 100_001)
	}
	t.Fatalf("unknown placeholder %s", placeholder)
	return ""
}

// caller is the app an input is sent as: the one of the body's currency.
func (fx bodyFixture) caller(body []byte) creds {
	var b struct {
		Currency string `json:"currency"`
	}
	_ = json.Unmarshal(body, &b)
	if app, ok := fx.apps[strings.ToUpper(b.Currency)]; ok {
		return app
	}
	return fx.apps["IDR"]
}

// FuzzJSONBodies sends arbitrary bodies and content types to every endpoint
// the OpenAPI document lists with a JSON body (the route index picks one),
// as a merchant made for the input whose records fill the body's
// placeholders, so that an input reproduces alone. Whatever is sent, the
// answer is never a 5xx, always a JSON object, the errors envelope with a
// code and a message on a 4xx, and a 4xx writes nothing: no table of the
// database gains or loses a row (payd runs without workers, so nothing else
// writes); a string with a control character (CONTRACT §24) is never
// accepted. The valid bodies of the seed table are accepted. No
// Idempotency-Key is sent: 4xx answers to keyed requests are stored by design.
//
// The seeds are checked in under testdata/fuzz/FuzzJSONBodies: seed-* files
// made from jsonBodySeeds (-update rewrites them), and what fuzzing found.
func FuzzJSONBodies(f *testing.F) {
	seeds, err := jsonBodySeeds()
	if err != nil {
		f.Fatal(err)
	}
	checkSeedCorpus(f, seeds)
	p := startQuiet(f, storetest.SQLiteDSN(f))
	wantCountedTablesCoverSchema(f, p)
	routes := fuzzRoutes(f, p)
	for i := len(jsonBodyRoutes); i < len(routes); i++ {
		for _, body := range []string{`{}`, `null`, `[]`, `{"id":1e400}`, "{\"\xff\":\"\xff\"}", `$DEEP`, `{"padding":"$BIG"}`} {
			f.Add(byte(i), []byte(body), "application/json")
		}
	}
	foreignApp := p.merchant("IDR")["IDR"]
	r := p.post("/v2/payins", foreignApp, pinBody("IDR", "id_bank_qris_idr", 100000))
	want(f, r, 201)
	foreign := map[string]string{phForeignAccount: foreignApp.AccountNumber, phForeignPayin: str(r.JSON(f), "uuid")}
	placeholders := slices.Sorted(maps.Keys(map[string]bool{phAccount: true, phPayin: true, phReceivedPayin: true, phOTPPayin: true,
		phContactEmail: true, phKYCEmail: true, phCustomerID: true, phWebhookID: true, phReceiver: true, phFuture: true, phFundedAUD: true,
		phBig: true, phMB: true, phDeep: true}))
	valid := validBodies()
	f.Fuzz(func(t *testing.T, route byte, body []byte, contentType string) {
		if !validHeaderValue(contentType) {
			return
		}
		index := int(route) % len(routes)
		method, path, _ := strings.Cut(routes[index], " ")
		c, err := p.srv.Merchants.Create(context.Background(), merchantParams(fuzzCurrencies...))
		if err != nil {
			t.Fatal(err)
		}
		fx := bodyFixture{t: t, p: &payd{t: t, srv: p.srv, base: p.base, root: p.root}, apps: map[string]creds{}}
		for _, a := range c.Accounts {
			fx.apps[a.Currency] = creds{MerchantID: c.MerchantID, Currency: a.Currency, AccountNumber: a.AccountNumber, AppID: a.AppID, SecretKey: a.SecretKey}
		}
		filled := string(body)
		for ph, v := range foreign {
			filled = strings.ReplaceAll(filled, ph, v)
		}
		for _, ph := range placeholders {
			if strings.Contains(filled, ph) {
				filled = strings.ReplaceAll(filled, ph, fx.value(ph))
			}
		}
		as := fx.caller([]byte(filled))
		before, err := countRows(context.Background(), p.srv.DB)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fx.p.send(req{method: method, path: path, as: &as, body: []byte(filled), header: map[string]string{"Content-Type": contentType}, fuzzed: true})
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		if r.Status >= 500 {
			t.Fatalf("%s %s answered %d: %s", method, path, r.Status, r.Body)
		}
		wantJSONAnswer(t, r)
		after, err := countRows(context.Background(), p.srv.DB)
		if err != nil {
			t.Fatal(err)
		}
		if valid[routeBody{index, string(body)}] && contentType == "application/json" && r.Status >= 300 {
			t.Fatalf("%s %s refused a valid body: %d %s", method, path, r.Status, r.Body)
		}
		if ctrl := input.JSON([]byte(filled)); r.Status < 300 && ctrl != nil {
			t.Fatalf("%s %s accepted a string that breaks the input rule (%v): %d %s", method, path, ctrl, r.Status, r.Body)
		}
		if changed := before.changed(after); r.Status >= 400 && len(changed) > 0 {
			t.Fatalf("%s %s answered %d %s but wrote rows: %v", method, path, r.Status, bytes.TrimSpace(r.Body), changed)
		}
	})
}
