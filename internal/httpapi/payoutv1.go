package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/payout"
	"payd/internal/store"
)

// maxPayoutFileBodyBytes bounds POST /v1/payouts/file: the file and its fields.
const maxPayoutFileBodyBytes = maxPayoutFileBytes + 64<<10

// maxPayoutTextBytes bounds each text part of POST /v1/payouts/file.
const maxPayoutTextBytes = 4 << 10

// scheduleAheadText is payout.MaxScheduleAheadDays in the documents' words.
var scheduleAheadText = fmt.Sprintf("%d days", payout.MaxScheduleAheadDays)

// The v1 bounds in the documents' words, said from the constants that hold them.
var (
	v1DescriptionText = fmt.Sprintf("%d to %d characters", payout.MinDescriptionLen, maxV1DescriptionLen)
	payoutFileText    = fmt.Sprintf("at most %d MB (413) and %s transactions", maxPayoutFileBytes>>20, thousands(maxPayoutFileRows))
)

// thousands writes n as the documents do: 1,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func (a *API) payoutV1Routes() []route {
	v1Codes := []string{fault.CodeNotFound, fault.CodeCurrency, fault.CodeMethodNotEnabled, codeMixedAddressing, fault.CodeAlreadyExists,
		fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds}
	rules := "Each transaction is addressed by payid + payid_type (lower case: email, phone, abn, organisation_id; upper case is refused, naming the v1/v2 difference) or by bsb + account_number, never both; a batch uses one addressing throughout (422 MIXED_ADDRESSING, nothing created). description " + fmt.Sprintf("%d–%d", payout.MinDescriptionLen, maxV1DescriptionLen) + " characters; amounts in AUD (at most 2 decimals); scheduled_at in the future and at most " + scheduleAheadText + " ahead of the merchant's clock; external_id unique among the merchant's v1 payouts (a repeat is 409 ALREADY_EXISTS naming the existing payout) unless is_retry: true reuses the external_id of a payout with at least one failed transaction (completed or not; a rejected or expired payout's have all failed), and then pays only what the new request carries; without a failed transaction a repeat stays 409 ALREADY_EXISTS. The payout then runs as a v2 au_payid_npp_aud or au_bank_aud payout would: funds held, approvals, the rail, webhooks (with this v1 record as their body)."
	return []route{
		{method: "POST", path: "/v1/payouts", auth: authKeys, summary: "Create a v1 AUD payout.", description: rules,
			body: payoutV1Request{}, response: payout.V1Payout{}, status: 201, codes: v1Codes,
			handle: jsonHandler(a, http.StatusCreated, a.createPayoutV1), merchantLane: true},
		{method: "POST", path: "/v1/payouts/file", auth: authKeys, maxBody: maxPayoutFileBodyBytes, summary: "Create a v1 AUD payout from a CSV batch file (multipart/form-data).",
			description: "Part file: CSV, UTF-8 with or without a byte-order mark, " + payoutFileText + ", a header row naming its columns in any order among payee, email, amount, address, payid, payid_type, bsb, account_number. " +
				"The other parts are the fields of POST /v1/payouts: description, scheduled_at, is_retry (true or false), external_id, webhook_notification (a JSON object). " +
				"Every refused row is reported in one 422, each member named rows[N].column with N the file's line number (the header is line 1; a row that is not CSV, such as one with a bare or unclosed quote, is rows[N] by the line it starts on); nothing is created. " +
				"No cell holds a control character (tab and line breaks included), and a payee may not start with =, +, - or @ (a spreadsheet would read it as a formula). The text parts hold no control character either, description aside, which may hold tabs and line breaks. " + rules,
			form: []formPart{
				{name: "file", file: true, required: true, doc: "The CSV batch."},
				{name: "description", required: true, doc: v1DescriptionText + "."},
				{name: "scheduled_at", doc: "RFC 3339, in the future and at most " + scheduleAheadText + " ahead."},
				{name: "is_retry", doc: "true or false."},
				{name: "external_id", doc: "Up to 100 characters."},
				{name: "webhook_notification", doc: "A JSON object {\"endpoint_url\",\"authorization_header\"}."},
			},
			response: payout.V1Payout{}, status: 201, codes: v1Codes, handle: a.createPayoutFile, merchantLane: true},
		{method: "GET", path: "/v1/payouts/detail", auth: authKeys, summary: "One v1 payout, by id or uuid (id wins).",
			params:   []param{{name: "id", typ: "integer", doc: "The payout's integer id."}, {name: "uuid", typ: "string", doc: "The payout's uuid."}},
			response: payout.V1Payout{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.payoutV1Detail},
	}
}

func (a *API) payoutV1Detail(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	rawID, uuid := q.str("id"), q.str("uuid")
	var id int64
	if rawID != "" {
		n, err := strconv.ParseInt(rawID, 10, 64)
		if err != nil || n <= 0 {
			q.fields.Add("id", "must be a positive integer")
		}
		id = n
	}
	if rawID == "" && uuid == "" {
		q.fields.Add("id", "give id or uuid")
	}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	p, err := a.Payouts.GetV1(r.Context(), principal(r), id, uuid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, p)
}

func (a *API) createPayoutFile(w http.ResponseWriter, r *http.Request) {
	req, file, err := readPayoutFile(r)
	if err != nil {
		io.Copy(io.Discard, r.Body)
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusCreated, nil)
	req.PayoutTransactionDetails = file.Transactions
	created, err := inTx(a, r, func(tx *store.Tx) (payout.V1Payout, error) {
		created, err := a.createPayoutV1(r.Context(), tx, principal(r), req)
		return created, file.toRows(err)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusCreated, created)
}

// readPayoutFile reads the multipart body of POST /v1/payouts/file, each
// part bounded as it is read: the file by maxPayoutFileBytes, the text
// parts by maxPayoutTextBytes.
func readPayoutFile(r *http.Request) (payoutV1Request, payoutFile, error) {
	var req payoutV1Request
	f := fault.Fields{}
	var data []byte
	haveFile := false
	limit := func(name string) int64 {
		if name == "file" {
			return maxPayoutFileBytes
		}
		return maxPayoutTextBytes
	}
	err := readParts(r, "with the CSV as the part file", limit, func(name string, value []byte, over bool) error {
		switch {
		case over && name == "file":
			return fault.New(fault.TooLarge, fault.CodeTooLarge, "the file is larger than %d bytes", maxPayoutFileBytes)
		case over:
			f.Add(input.Quote(name), fmt.Sprintf("is at most %d bytes", maxPayoutTextBytes))
		case name == "file":
			data, haveFile = value, true
		default:
			payoutFilePart(f, &req, name, value)
		}
		return nil
	})
	if err != nil {
		return req, payoutFile{}, err
	}
	if !haveFile {
		f.Add("file", "is required")
	}
	if err := f.Err(); err != nil {
		return req, payoutFile{}, err
	}
	file, err := parsePayoutFile(data)
	return req, file, err
}

// payoutFilePart sets the member of req a text part of POST
// /v1/payouts/file names, its problems added to f. A text part meets the
// input rule (CONTRACT §24): description is free text and may run over
// lines; the others are one line each.
func payoutFilePart(f fault.Fields, req *payoutV1Request, name string, value []byte) {
	if p := input.Problem(name, string(value)); p != "" {
		f.Add(input.Quote(name), p)
		return
	}
	switch name {
	case "description":
		req.Description = string(value)
	case "scheduled_at":
		req.ScheduledAt = string(value)
	case "external_id":
		req.ExternalID = string(value)
	case "is_retry":
		b, err := strconv.ParseBool(string(value))
		if err != nil {
			f.Add("is_retry", "must be true or false")
		}
		req.IsRetry = b
	case "webhook_notification":
		if err := json.Unmarshal(value, &req.WebhookNotification); err != nil {
			f.Add("webhook_notification", `must be a JSON object {"endpoint_url","authorization_header"}`)
		} else if e, ok := fault.As(input.JSONIn("webhook_notification", value)); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
}
