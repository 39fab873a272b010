package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"

	"payd/internal/fault"
	"payd/internal/iso20022"
	"payd/internal/merchant"
	"payd/internal/reconcile"
	"payd/internal/settlement"
	"payd/internal/statement"
	"payd/internal/statement/bai2"
	"payd/internal/store"
)

// maxStatementBodyBytes bounds POST /v2/reconciliation/statements: the file
// and its text parts.
const maxStatementBodyBytes = reconcile.MaxFileBytes + 16<<10

// maxStatementTextBytes bounds each text part of a statement upload.
const maxStatementTextBytes = 256

// statementPage is the page list of statements.
type statementPage = pageList[reconcile.Statement]

var statementUploadText = fmt.Sprintf("at most %d MB (413) and %s entries", reconcile.MaxFileBytes>>20, thousands(reconcile.MaxEntries))

func (a *API) reconcileRoutes() []route {
	lineCodes := []string{fault.CodeNotFound, fault.CodeInvalidState}
	return []route{
		{method: "POST", path: "/v2/reconciliation/statements", auth: authKeys, maxBody: maxStatementBodyBytes,
			summary: "Upload a bank statement of the account payd settles into, and match its credits (multipart/form-data).",
			description: "Part file: a camt.053.001.08, a BAI2 file, or a CSV whose header is date,amount,reference,description (amount signed in major units, positive a credit; dates YYYY-MM-DD), told apart by content, " + statementUploadText + ". " +
				"A format payd does not read here (MT940, camt.054, anything else) is 415; a statement whose control totals disagree (camt.053: opening + credits - debits = closing and TxsSummry; BAI2: the 49/98/99 totals and counts) is 422 VALIDATION_FAILED naming file, the message naming the check; so is one that cannot be read or reports more than 366 days. " +
				"A CSV names no account: account_number is required with it (422), and its currency is the currency part or the calling app's. With camt.053 and BAI2, account_number, when given, must be the file's account (422). " +
				"Each booked credit becomes a line (debits are only counted in entries) and is matched to the settlement or external transfer sent to that account in the statement's currency with the same amount whose bank_reference the line's reference or description contains, its value date within 3 business days (Monday to Friday) of the day the record completed in the merchant's time zone; each record is matched by one line at most. " +
				"missing counts the completed settlements and external transfers to the account in the statement's period that no line matched. The same file again answers 200 with the same statement, nothing added; a new one 201. The upload is written to the portal's audit log.",
			form: []formPart{
				{name: "file", file: true, required: true, doc: "The statement: camt.053, BAI2 or CSV."},
				{name: "account_number", doc: "The merchant's bank account the statement reports; required with a CSV."},
				{name: "currency", doc: "A CSV's currency (ISO 4217); absent: the calling app's."},
			},
			response: reconcile.Statement{}, status: 201, repeatStatus: 200, codes: []string{fault.CodeNotFound, fault.CodeUnsupportedMedia}, handle: a.uploadStatement, merchantLane: true},
		{method: "GET", path: "/v2/reconciliation/statements", auth: authKeys, summary: "The merchant's uploaded statements, newest first, with their counts.",
			params: pagingParams, response: statementPage{}, status: 200, handle: a.listStatements},
		{method: "GET", path: "/v2/reconciliation/statements/detail", auth: authKeys, summary: "One statement: its lines and the records missing from it.",
			description: "lines are the statement's credits in file order, each matched (matched_to names the settlement or transfer), unmatched or ignored (with its reason); missing are the completed settlements and external transfers to the account in the statement's period that no line matched.",
			params:      []param{{name: "id", typ: "string", required: true, doc: "The statement's id."}},
			response:    reconcile.Detail{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "id", a.Reconcile.Get, nil)},
		{method: "POST", path: "/v2/reconciliation/lines/match", auth: authKeys, summary: "Match a statement line to a settlement or external transfer by hand.",
			description: "The record must be the merchant's settlement or external transfer to a bank account (404 otherwise; one to the merchant's own treasury account is 422 naming uuid), in the statement's currency (422 naming uuid), processing or completed (409); its amount may differ from the line's. A line already matched, or a record another line is matched to, is 409 INVALID_STATE: unmatch first. Written to the portal's audit log. Answers the line.",
			body:        reconcile.MatchRequest{}, response: reconcile.Line{}, status: 200, codes: lineCodes, handle: lineHandler(a, a.Reconcile.Match), merchantLane: true},
		{method: "POST", path: "/v2/reconciliation/lines/unmatch", auth: authKeys, summary: "Make a matched or ignored statement line unmatched again.",
			description: "An unmatched line is 409 INVALID_STATE. Written to the portal's audit log. Answers the line.",
			body:        reconcile.UnmatchRequest{}, response: reconcile.Line{}, status: 200, codes: lineCodes, handle: lineHandler(a, a.Reconcile.Unmatch), merchantLane: true},
		{method: "POST", path: "/v2/reconciliation/lines/ignore", auth: authKeys, summary: "Ignore an unmatched statement line, saying why.",
			description: "reason is 1 to 500 characters. Only an unmatched line is ignored (409 INVALID_STATE otherwise). Written to the portal's audit log. Answers the line.",
			body:        reconcile.IgnoreRequest{}, response: reconcile.Line{}, status: 200, codes: lineCodes, handle: lineHandler(a, a.Reconcile.Ignore), merchantLane: true},
		{method: "GET", path: "/v2/sandbox/bank_statement", auth: authKeys, sandboxOnly: true,
			summary: "Sandbox: the statement the sandbox bank would send for the merchant's external settlement account that day.",
			description: "The account is the external_bank_account of the currency's settlement config (422 NO_BENEFICIARY without one). The statement holds a credit for each settlement and external transfer to that account that completed on date in the merchant's time zone (its reference the record's bank_reference), its opening balance what payd sent there before that day and its closing balance the opening plus the day's credits. " +
				"format camt053 is a camt.053.001.08 (valid against the official XSD), bai2 a BAI2 file with its control totals, csv the upload's CSV (date,amount,reference,description); each is answered as application/octet-stream with a file name. Uploaded back to POST /v2/reconciliation/statements (a CSV with the account's account_number), every line matches and nothing is missing.",
			params: []param{
				{name: "date", typ: "string", required: true, doc: "The day, YYYY-MM-DD, in the merchant's time zone."},
				{name: "format", typ: "string", doc: "camt053 (default), bai2 or csv."},
				{name: "currency", typ: "string", doc: "ISO 4217 code; defaults to the calling app's."},
			},
			contentType: bankStatementContentType, response: csvFile(""), status: 200, codes: []string{settlement.CodeNoBeneficiary}, handle: a.sandboxBankStatement},
	}
}

// bankStatementContentType is the sandbox bank statement's media type,
// whatever its format (the file name tells it).
const bankStatementContentType = "application/octet-stream"

func (a *API) sandboxBankStatement(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := newQuery(r)
	dateText := q.required("date")
	format := q.str("format")
	currency := currencyParam(q, p)
	date, err := statement.ParseDate(dateText)
	if dateText != "" && err != nil {
		q.fields.Add("date", "must be a date, YYYY-MM-DD")
	}
	if format == "" {
		format = string(statement.Camt053)
	}
	if format != string(statement.Camt053) && format != string(statement.BAI2) && format != string(statement.CSV) {
		q.fields.Add("format", "must be camt053, bai2 or csv")
	}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	h, entries, err := a.Reconcile.BankStatement(r.Context(), p, currency, date)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	loc := a.location(p.Timezone)
	var buf bytes.Buffer
	ext := map[string]string{string(statement.Camt053): "xml", string(statement.BAI2): "bai", string(statement.CSV): "csv"}[format]
	switch statement.Format(format) {
	case statement.Camt053:
		err = iso20022.WriteCamt053(&buf, h, entries, loc)
	case statement.BAI2:
		err = bai2.Write(&buf, "PAYDSANDBOXBANK", "PAYD", h, entries, loc)
	default:
		err = statement.WriteCSV(&buf, currency, entries)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", bankStatementContentType)
	hd.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fmt.Sprintf("statement_%s_%s.%s", h.Account.Digits(), date, ext)}))
	hd.Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

// lineCall is a manual change of a statement line, by an actor.
type lineCall[Req any] func(ctx context.Context, tx *store.Tx, p merchant.Principal, by reconcile.Actor, req Req) (reconcile.Line, error)

// lineHandler is a whole manual-change endpoint: jsonHandler with the
// calling app, and the client's address, as the audit log's actor.
func lineHandler[Req any](a *API, call lineCall[Req]) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		by := reconcile.AppActor(principal(r).AppID, a.TrustedProxies.Client(r).String())
		jsonHandler(a, http.StatusOK, func(ctx context.Context, tx *store.Tx, p merchant.Principal, req Req) (reconcile.Line, error) {
			return call(ctx, tx, p, by, req)
		})(w, r)
	}
}

func (a *API) uploadStatement(w http.ResponseWriter, r *http.Request) {
	u, err := readStatementForm(r)
	if err != nil {
		io.Copy(io.Discard, r.Body)
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusCreated, nil)
	p := principal(r)
	by := reconcile.AppActor(p.AppID, a.TrustedProxies.Client(r).String())
	status := http.StatusCreated
	st, err := inTx(a, r, func(tx *store.Tx) (reconcile.Statement, error) {
		st, created, err := a.Reconcile.Upload(r.Context(), tx, p, by, u)
		status = http.StatusCreated
		if !created {
			// The same file again: the statement as it is, 200 (CONTRACT §25).
			status = http.StatusOK
		}
		if c := claimOf(r); c != nil {
			c.Status = status
		}
		return st, err
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, status, st)
}

// readStatementForm reads the multipart body of a statement upload, each
// part bounded as it is read: the file by reconcile.MaxFileBytes, the text
// parts by maxStatementTextBytes. Other parts are skipped.
func readStatementForm(r *http.Request) (reconcile.Upload, error) {
	var u reconcile.Upload
	texts := map[string]*string{"account_number": &u.AccountNumber, "currency": &u.Currency}
	limit := func(name string) int64 {
		switch {
		case name == "file":
			return reconcile.MaxFileBytes
		case texts[name] != nil:
			return maxStatementTextBytes
		}
		return skipPart
	}
	f := fault.Fields{}
	seen := map[string]bool{}
	err := readParts(r, "with the statement as the part file", limit, func(name string, data []byte, over bool) error {
		switch {
		case seen[name]:
			f.Add(name, "is sent more than once")
		case over && name == "file":
			return fault.New(fault.TooLarge, fault.CodeTooLarge, "file is larger than %d bytes", reconcile.MaxFileBytes)
		case over:
			f.Add(name, fmt.Sprintf("is at most %d bytes", maxStatementTextBytes))
		case name == "file":
			u.File = data
		default:
			*texts[name] = string(data)
		}
		seen[name] = true
		return nil
	})
	if err != nil {
		return u, err
	}
	if !seen["file"] {
		f.Add("file", "is required: a camt.053, BAI2 or CSV statement")
	}
	return u, f.Err()
}

func (a *API) listStatements(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	page, perPage := q.paging()
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.Reconcile.List(r.Context(), principal(r), page, perPage)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}
