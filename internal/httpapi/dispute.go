package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"payd/internal/dispute"
	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/merchant"
	"payd/internal/store"
)

type disputePage = pageList[dispute.Dispute]

var disputeStatuses = func() string {
	var s string
	for i, st := range dispute.Statuses {
		if i > 0 {
			s += ", "
		}
		s += string(st)
	}
	return s
}()

func (a *API) disputeRoutes() []route {
	stateCodes := []string{fault.CodeNotFound, fault.CodeInvalidState}
	// A decision's posts may take available below zero, but not past the
	// largest balance payd holds.
	decideCodes := []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeAmountOutOfRange}
	return []route{
		{method: "GET", path: "/v2/disputes", auth: authKeys, summary: "The merchant's card disputes, newest first.",
			description: "Every currency's, unless currency names one. status filters (" + disputeStatuses + "; another value is 422).",
			params: append([]param{
				{name: "status", typ: "string", doc: "Only disputes in this status."},
				{name: "currency", typ: "string", doc: "Only disputes in this currency (ISO 4217)."},
			}, pagingParams...),
			response: disputePage{}, status: 200, handle: a.listDisputes},
		{method: "GET", path: "/v2/disputes/detail", auth: authKeys, summary: "One dispute, by uuid.",
			description: "The record the dispute's events carry. Another merchant's uuid is 404.",
			params:      []param{{name: "uuid", typ: "string", required: true, doc: "The dispute's uuid."}},
			response:    dispute.Dispute{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "uuid", a.Disputes.Get, nil)},
		{method: "POST", path: "/v2/disputes/evidence", auth: authKeys, maxBody: dispute.MaxUploadBytes,
			summary: "Stage or submit evidence for a dispute that needs a response (multipart/form-data).",
			description: fmt.Sprintf("Text fields product_description, customer_communication, refund_policy and uncategorized_text (each at most %d characters) replace the staged ones they name; each part files adds a file, a PDF, PNG or JPEG told by its content, at most %d MB (413 over it), at most %d files a dispute (422 VALIDATION_FAILED naming files, as is a file of another type). ", dispute.MaxTextLen, dispute.MaxFileBytes>>20, dispute.MaxFiles) +
				"submit true sends the evidence, which must hold a text field or a file (422 naming evidence): the dispute is under_review and dispute.updated goes out; false (the default) keeps it staged. " +
				"A dispute under review or decided is 409 INVALID_STATE. Answers the dispute.",
			form: []formPart{
				{name: "uuid", required: true, doc: "The dispute's uuid."},
				{name: "product_description", doc: "What was sold."},
				{name: "customer_communication", doc: "What the customer and the merchant said."},
				{name: "refund_policy", doc: "The refund policy the customer was shown."},
				{name: "uncategorized_text", doc: "Anything else."},
				{name: "files", file: true, doc: "A file of evidence (PDF, PNG or JPEG); the part may repeat."},
				{name: "submit", doc: "true: send the evidence; false (default): stage it."},
			},
			response: dispute.Dispute{}, status: 200, codes: append(stateCodes, fault.CodeUnsupportedMedia), handle: a.disputeEvidence, merchantLane: true},
		{method: "GET", path: "/v2/disputes/evidence/file", auth: authKeys, summary: "One file of a dispute's evidence, as it was uploaded.",
			description: "The bytes as uploaded, as application/octet-stream with a Content-Disposition attachment naming the file; its type is the file's content_type in the dispute's evidence.files (application/pdf, image/png or image/jpeg). Another merchant's dispute or file is 404.",
			params: []param{{name: "uuid", typ: "string", required: true, doc: "The dispute's uuid."},
				{name: "id", typ: "string", required: true, doc: "The file's id (evidence.files[].id)."}},
			contentType: "application/octet-stream", response: csvFile(""), status: 200, codes: []string{fault.CodeNotFound}, handle: a.disputeFile},
		{method: "POST", path: "/v2/disputes/accept", auth: authKeys, summary: "Accept a dispute: it is lost.",
			description: "Only a dispute that needs a response (409 INVALID_STATE otherwise). The amount stays with the cardholder (the dispute record done) and the account's dispute fee is debited (a dispute_fee record; available may go below zero). dispute.closed goes out. Answers the dispute.",
			body:        dispute.UUIDRequest{}, response: dispute.Dispute{}, status: 200, codes: decideCodes, handle: jsonHandler(a, http.StatusOK, a.Disputes.Accept), merchantLane: true},
		{method: "POST", path: "/v2/sandbox/disputes", auth: authKeys, sandboxOnly: true,
			summary: "Sandbox: the cardholder's bank disputes a paid card payment.",
			description: "The payment's amount (or amount, at most what is not refunded) leaves available for a waiting dispute balance record, which may take available below zero; the dispute needs a response by due_by (7 days on the merchant's clock) and dispute.created goes out to the payment's notification target and matching endpoints. " +
				"A payment not paid by card, refunded in full or disputed already is 409 INVALID_STATE; another merchant's, 404. Without payment_id the sandbox makes a card payment (a payin link in NZD, else HKD, else a gateway payment in AUD that notifies no one; 422 CURRENCY_NOT_SUPPORTED with none of these accounts), pays it and disputes that. " +
				"The test card 4000 0000 0000 0259 is disputed by itself (reason fraudulent) a minute after it paid, on the merchant's clock.",
			body: dispute.SandboxRequest{}, response: dispute.Dispute{}, status: 201,
			codes:  []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeCurrency, fault.CodeAmountOutOfRange, fault.CodeMethodNotEnabled},
			handle: a.sandboxDispute, merchantLane: true},
		{method: "POST", path: "/v2/sandbox/disputes/resolve", auth: authKeys, sandboxOnly: true,
			summary:     "Sandbox: the network decides a dispute under review.",
			description: "won: the amount is back in available (the dispute record failed); lost: it is gone (the record done) and the dispute fee is debited. A dispute not under review is 409 INVALID_STATE. dispute.closed goes out. Answers the dispute.",
			body:        dispute.ResolveRequest{}, response: dispute.Dispute{}, status: 200, codes: decideCodes, handle: jsonHandler(a, http.StatusOK, a.Disputes.Resolve), merchantLane: true},
		{method: "POST", path: "/v1/payment_gateways/refund", auth: authKeys, summary: "Refund a gateway payment paid by card.",
			description: refundRules, body: gateway.RefundRequest{}, response: gateway.Refund{}, status: 200,
			codes: []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeInsufficientFunds, fault.CodeAmountOutOfRange}, merchantLane: true,
			handle: jsonHandler(a, http.StatusOK, func(ctx context.Context, tx *store.Tx, p merchant.Principal, req gateway.RefundRequest) (gateway.Refund, error) {
				if req.PaymentID == "" {
					return gateway.Refund{}, fault.Field("payment_id", "is required")
				}
				return a.Gateway.Refund(ctx, tx, p, gateway.TypeGatewayPayment, string(req.PaymentID), req.Amount)
			})},
		{method: "POST", path: "/v3/payin_links/refund", auth: authKeys, summary: "Refund a payin link paid by card.",
			description: refundRules, body: gateway.LinkRefundRequest{}, response: gateway.Refund{}, status: 200,
			codes: []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeInsufficientFunds, fault.CodeAmountOutOfRange}, merchantLane: true,
			handle: jsonHandler(a, http.StatusOK, func(ctx context.Context, tx *store.Tx, p merchant.Principal, req gateway.LinkRefundRequest) (gateway.Refund, error) {
				if req.UUID == "" {
					return gateway.Refund{}, fault.Field("uuid", "is required")
				}
				return a.Gateway.Refund(ctx, tx, p, gateway.TypePayinLink, req.UUID, req.Amount)
			})},
	}
}

const refundRules = "amount (absent: all not refunded yet) leaves the payment's account's available balance at once (422 INSUFFICIENT_FUNDS without it), a done refund balance record whose reference_id is the payment's id; refunds of a payment add up to at most what was paid (422 naming amount). " +
	"Only a payment paid by card (409 INVALID_STATE otherwise, also once refunded in full); a disputed payment is 409 INVALID_STATE: the dispute decides what goes back. Another merchant's payment is 404."

func (a *API) listDisputes(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	status := dispute.Status(q.str("status"))
	if status != "" && !slices.Contains(dispute.Statuses, status) {
		q.fields.Add("status", "must be one of "+disputeStatuses)
	}
	currency := q.str("currency")
	page, perPage := q.paging()
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.Disputes.List(r.Context(), principal(r), dispute.ListQuery{Status: status, Currency: currency, Page: page, PerPage: perPage})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}

func (a *API) disputeFile(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	uuid, id := q.required("uuid"), q.required("id")
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	f, data, err := a.Disputes.FileContent(r.Context(), principal(r), uuid, id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// Served as bytes to save (its type is the record's content_type), never
	// shown by a browser in payd's origin.
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(f.Name))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

func (a *API) sandboxDispute(w http.ResponseWriter, r *http.Request) {
	var req dispute.SandboxRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	p := principal(r)
	if err := a.Disputes.SandboxPayment(r.Context(), p, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusCreated, nil)
	d, err := inTx(a, r, func(tx *store.Tx) (dispute.Dispute, error) { return a.Disputes.OpenSandbox(r.Context(), tx, p, req) })
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if body := claimOf(r).Body(); body != nil {
		writeBody(w, http.StatusCreated, body)
		return
	}
	a.writeJSON(w, r, http.StatusCreated, d)
}

func (a *API) disputeEvidence(w http.ResponseWriter, r *http.Request) {
	uuid, in, err := readEvidenceForm(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusOK, nil)
	d, err := inTx(a, r, func(tx *store.Tx) (dispute.Dispute, error) {
		return a.Disputes.Answer(r.Context(), tx, principal(r), uuid, in)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if body := claimOf(r).Body(); body != nil {
		writeBody(w, http.StatusOK, body)
		return
	}
	a.writeJSON(w, r, http.StatusOK, d)
}

// readEvidenceForm reads an evidence upload, each part bounded as it is
// read: files by dispute.MaxFileBytes (a larger one is 413), at most one
// more than dispute.MaxFiles of them, text parts by their character bound.
func readEvidenceForm(r *http.Request) (string, dispute.EvidenceInput, error) {
	in := dispute.EvidenceInput{Text: map[string]string{}}
	var uuid, submit string
	limit := func(name string) int64 {
		switch {
		case name == "files":
			return dispute.MaxFileBytes
		case name == "uuid" || name == "submit":
			return 256
		case slices.Contains(dispute.TextFields, name):
			return dispute.MaxTextLen * 4
		}
		return skipPart
	}
	f := fault.Fields{}
	seen := map[string]bool{}
	err := readNamedParts(r, "with the evidence files as parts named files", limit, func(name, filename string, data []byte, over bool) error {
		switch {
		case name == "files" && over:
			return fault.New(fault.TooLarge, fault.CodeTooLarge, "file %q is larger than %d MB", filename, dispute.MaxFileBytes>>20)
		case name == "files":
			if len(in.Files) == dispute.MaxFiles {
				f.Add("files", fmt.Sprintf("at most %d files a dispute", dispute.MaxFiles))
				return nil
			}
			in.Files = append(in.Files, dispute.Upload{Name: filename, Data: data})
			return nil
		case seen[name]:
			f.Add(name, "is sent more than once")
		case over:
			f.Add(name, "is too long")
		case name == "uuid":
			uuid = string(data)
		case name == "submit":
			submit = string(data)
		default:
			in.Text[name] = string(data)
		}
		seen[name] = true
		return nil
	})
	if err != nil {
		return "", in, err
	}
	if uuid == "" {
		f.Add("uuid", "is required")
	}
	switch submit {
	case "", "false":
	case "true":
		in.Submit = true
	default:
		f.Add("submit", "must be true or false")
	}
	return uuid, in, f.Err()
}
