package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"slices"

	"payd/internal/contact"
	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/store"
)

// maxKYCBodyBytes bounds a whole KYC submission: three files of at most 5 MB
// each and the text parts.
const maxKYCBodyBytes = 16 << 20

// maxKYCTextBytes bounds each text part of a KYC submission (but
// webhook_notification, which has its own bound).
const maxKYCTextBytes = 1 << 10

// contactPage, customerPage and messagePage are page lists (CONTRACT §3).
type contactPage struct {
	PerPage   int               `json:"per_page"`
	Page      int               `json:"page"`
	TotalPage int               `json:"total_page" doc:"Number of pages; 0 when there are no records."`
	Total     int               `json:"total"`
	Records   []contact.Contact `json:"records"`
}

type customerPage struct {
	PerPage   int                `json:"per_page"`
	Page      int                `json:"page"`
	TotalPage int                `json:"total_page" doc:"Number of pages; 0 when there are no records."`
	Total     int                `json:"total"`
	Records   []contact.Customer `json:"records"`
}

type messagePage struct {
	PerPage   int               `json:"per_page"`
	Page      int               `json:"page"`
	TotalPage int               `json:"total_page" doc:"Number of pages; 0 when there are no records."`
	Total     int               `json:"total"`
	Records   []contact.Message `json:"records"`
}

// contactStatus is the {"status":"Ok"} answer of the contact endpoints.
type contactStatus struct {
	Status string `json:"status" enum:"Ok"`
}

var contactOK = contactStatus{Status: "Ok"}

type resendAnswer struct {
	Status    string `json:"status" enum:"Ok"`
	MessageID string `json:"message_id,omitempty" doc:"Sandbox only: the id of the message in the outbox (GET /v2/contacts/verification_messages)."`
}

var contactPageParams = []param{
	{name: "page", typ: "integer", doc: "Page number, from 1 (default 1, at most 1000000)."},
	{name: "per_page", typ: "integer", doc: "Records per page, 1 to 100 (default 20)."},
	{name: "from_date", typ: "string", doc: "Created at or after: RFC 3339 time, YYYY-MM-DD or DD/MM/YY (dates in the merchant's time zone)."},
	{name: "to_date", typ: "string", doc: "Created before: RFC 3339 time (exclusive), or a date whose whole day is included."},
}

func (a *API) contactRoutes() []route {
	return []route{
		{method: "POST", path: "/v2/contacts", auth: authKeys,
			summary:     "Create a contact.",
			description: "The fields of the spec's Contact table. email, first_name and last_name are required; type defaults to individual; reg_no is required when type is organization; dob is yyyy-mm-dd (1900-01-01 to today); country, a valid ISO 3166-1 alpha-2 code (either case, kept upper case). Every text member is trimmed and bounded (see the body schema); each wrong member is named in errors.fields (422 VALIDATION_FAILED). The email identifies the contact within the merchant, whatever its case: a second contact with the same email is 409 CONTACT_EXISTS. The answer is the contact with uuid, kyc_status (none), verified_at (null), created_at and updated_at.",
			body:        contact.NewContact{}, response: contact.Contact{}, status: 201, codes: []string{contact.CodeContactExists, fault.CodeNotFound},
			handle: jsonHandler(a, http.StatusCreated, a.Contacts.Create)},
		{method: "GET", path: "/v2/contacts/detail", auth: authKeys,
			summary:     "A contact, found by email.",
			description: "The email is matched whatever its case. Another merchant's contact is 404, exactly like an unknown email.",
			params:      []param{{name: "email", typ: "string", required: true, doc: "The contact's email."}},
			response:    contact.Contact{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.contactDetail},
		{method: "GET", path: "/v2/contacts", auth: authKeys,
			summary:  "The merchant's contacts, newest first (page list).",
			params:   contactPageParams,
			response: contactPage{}, status: 200, handle: a.listContacts},
		{method: "PUT", path: "/v2/contact/update_info", auth: authKeys,
			summary:     "Deprecated: change a contact's details.",
			description: "Deprecated (every answer carries Deprecation: true). email identifies the contact (case-insensitive) and cannot itself be changed; every other Contact member present in the body replaces the stored value, an absent or null member keeps it, and an empty string clears an optional member. The result is validated like a new contact. A blank or missing email is 422 {\"errors\":{\"code\":\"VALIDATION_FAILED\",\"message\":\"Email can't be blank\"}}; an email the merchant has no contact with is 404. Success: 200 {\"status\":\"Ok\"}.",
			body:        contact.ContactChanges{}, response: contactStatus{}, status: 200, codes: []string{fault.CodeNotFound},
			headers: map[string]string{"Deprecation": "true"},
			handle:  a.updateContactInfo},
		{method: "POST", path: "/v2/contacts/submit_kyc", auth: authKeys, maxBody: maxKYCBodyBytes,
			summary: "Submit a contact's KYC documents (multipart/form-data).",
			description: "A multipart/form-data body (anything else is 415) of at most 16 MiB (413) with text parts email (finds the contact; 404 when unknown), document_type (passport, national_id or driving_license), document_number (at most 64 characters), issue_date and expiry_date (yyyy-mm-dd; issued no later than today, expiring after the issue date and not before today), issue_country and nationality (ISO 3166-1 alpha-2), " +
				"an optional webhook_notification (a JSON object {\"endpoint_url\",\"authorization_header\"}, at most 4 KiB), and file parts selfie, id_doc_front_side and id_doc_back_side (the back side may be left out for a passport). " +
				"Each file is at most 5 MB (413 naming the part) and must be a PNG, JPEG or PDF judged by its content, never by its name or declared type (422 naming the part); a missing file is 422 naming the part. Text parts are at most 1 KiB; a part sent twice is 422. The files are stored with their size and SHA-256. " +
				"The contact's kyc_status becomes pending, then the review decides approved or failed (sandbox: a document_number beginning with FAIL fails, any other is approved; the decision is made before this answer). Each change is sent to webhook_notification with X-Event-Type kyc.pending, kyc.approved or kyc.failed and the contact (as the detail endpoint returns its record) as the body. " +
				"A contact whose KYC is approved cannot submit again (409 INVALID_STATE); after failed it may. Success: 200 {\"status\":\"Ok\"}.",
			form: []formPart{
				{name: "email", required: true, doc: "The contact's email."},
				{name: "document_type", required: true, doc: "passport, national_id or driving_license."},
				{name: "document_number", required: true, doc: "At most 64 characters."},
				{name: "issue_date", required: true, doc: "yyyy-mm-dd."},
				{name: "expiry_date", required: true, doc: "yyyy-mm-dd."},
				{name: "issue_country", required: true, doc: "ISO 3166-1 alpha-2."},
				{name: "nationality", required: true, doc: "ISO 3166-1 alpha-2."},
				{name: "webhook_notification", doc: `JSON {"endpoint_url","authorization_header"}.`},
				{name: "selfie", file: true, required: true, doc: "PNG, JPEG or PDF, at most 5 MB."},
				{name: "id_doc_front_side", file: true, required: true, doc: "PNG, JPEG or PDF, at most 5 MB."},
				{name: "id_doc_back_side", file: true, doc: "PNG, JPEG or PDF, at most 5 MB; may be left out for a passport."},
			},
			response: contactStatus{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState},
			handle: a.submitKYC},
		{method: "POST", path: "/v2/contacts/resend_verification", auth: authKeys,
			summary:     "Send a contact a new identity-verification link.",
			description: "email identifies the contact. resend_to email (the default) or phone (an SMS to the contact's phone; 422 naming resend_to when the contact has none). The link is {public_url}/verify/{token}: a hosted page naming the contact where they confirm their identity. It is valid for 7 days on the merchant's clock and works once; sending a new link makes every earlier one stop working (its page answers 404). A contact that has already verified is 409 INVALID_STATE. Messages go through the deployment's sender: in the sandbox, an outbox read with GET /v2/contacts/verification_messages, and the answer carries the message_id.",
			body:        contact.ResendRequest{}, response: resendAnswer{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState},
			handle: a.resendVerification},
		{method: "GET", path: "/v2/contacts/verification_messages", auth: authKeys, sandboxOnly: true,
			summary:     "Sandbox: the outbox of verification messages (page list, newest first).",
			description: "Every email and SMS the sandbox sent for resend_verification, with its text and link.",
			params:      append([]param{{name: "email", typ: "string", doc: "Only the messages to this contact (case-insensitive)."}}, contactPageParams...),
			response:    messagePage{}, status: 200, handle: a.listVerificationMessages},
		{method: "POST", path: "/v2/customers", auth: authKeys,
			summary:     "Create a customer.",
			description: "first_name, last_name and email are required; phone, external_id (the merchant's own customer id, unique within the merchant: a second customer with it is 409 CUSTOMER_EXISTS), street, city, postal_code, state, country (ISO 3166-1 alpha-2) and metadata (at most 50 string values) are optional. Each wrong member is named in errors.fields (422).",
			body:        contact.NewCustomer{}, response: contact.Customer{}, status: 201, codes: []string{contact.CodeCustomerExists},
			handle: jsonHandler(a, http.StatusCreated, a.Contacts.CreateCustomer)},
		{method: "GET", path: "/v2/customers/detail", auth: authKeys,
			summary:     "A customer, found by its uuid.",
			description: "Another merchant's customer is 404, exactly like an unknown id.",
			params:      []param{{name: "id", typ: "string", required: true, doc: "The customer's uuid."}},
			response:    contact.Customer{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.customerDetail},
		{method: "GET", path: "/v2/customers", auth: authKeys,
			summary: "The merchant's customers, newest first (page list).",
			params: append([]param{
				{name: "email", typ: "string", doc: "Only customers with this email (case-insensitive)."},
				{name: "external_id", typ: "string", doc: "Only the customer with this external_id."},
			}, contactPageParams...),
			response: customerPage{}, status: 200, handle: a.listCustomers},
		{method: "PUT", path: "/v2/customers/update", auth: authKeys,
			summary:     "Change a customer's details.",
			description: "id (the customer's uuid) finds the customer (404 when unknown or another merchant's). Every other member present in the body replaces the stored value; absent or null members keep theirs; metadata, when present, replaces the whole object ({} clears it). The result is validated like a new customer. The answer is the updated customer.",
			body:        contact.CustomerChanges{}, response: contact.Customer{}, status: 200, codes: []string{fault.CodeNotFound, contact.CodeCustomerExists},
			handle: jsonHandler(a, http.StatusOK, a.Contacts.UpdateCustomer)},
	}
}

func (a *API) contactDetail(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	email := q.str("email")
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	c, err := a.Contacts.Detail(r.Context(), principal(r), email)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, c)
}

// contactListQuery reads the page and date parameters of a page list.
func (a *API) contactListQuery(r *http.Request) (*queryReader, contact.ListQuery) {
	q := newQuery(r)
	loc := a.location(principal(r).Timezone)
	return q, contact.ListQuery{
		Page:    q.intIn("page", 1, 1, maxPage),
		PerPage: q.intIn("per_page", defaultPerPage, 1, maxPerPage),
		From:    q.from("from_date", loc),
		To:      q.to("to_date", loc),
	}
}

// contactTotalPages is how many pages of perPage hold total records.
func contactTotalPages(total, perPage int) int {
	return (total + perPage - 1) / perPage
}

func (a *API) listContacts(w http.ResponseWriter, r *http.Request) {
	q, lq := a.contactListQuery(r)
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	l, err := a.Contacts.List(r.Context(), principal(r), lq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, contactPage{PerPage: lq.PerPage, Page: lq.Page, TotalPage: contactTotalPages(l.Total, lq.PerPage),
		Total: l.Total, Records: l.Records})
}

func (a *API) updateContactInfo(w http.ResponseWriter, r *http.Request) {
	// The spec marks this endpoint deprecated; every answer says so.
	w.Header().Set("Deprecation", "true")
	var req contact.ContactChanges
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusOK, func(any) any { return contactOK })
	_, err := inTx(a, r, func(tx *store.Tx) (contact.Contact, error) {
		return a.Contacts.UpdateInfo(r.Context(), tx, principal(r), req)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, contactOK)
}

func (a *API) submitKYC(w http.ResponseWriter, r *http.Request) {
	k, err := readKYCForm(r)
	if err != nil {
		// Read what is left (the route bounds it), so that the client, still
		// sending, reads the answer instead of a reset connection.
		io.Copy(io.Discard, r.Body)
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusOK, func(any) any { return contactOK })
	p := principal(r)
	submission, err := inTx(a, r, func(tx *store.Tx) (int64, error) {
		return a.Contacts.SubmitKYC(r.Context(), tx, p, k)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// The sandbox reviews at once, in a transaction of its own: the answer
	// (stored with the submission) does not wait on it.
	if err := a.DB.Exec(r.Context(), func(tx *store.Tx) error {
		return a.Contacts.Review(r.Context(), tx, p, submission)
	}); err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, contactOK)
}

// readKYCForm reads the multipart form of submit_kyc part by part, each
// part bounded as it is read: files by contact.MaxDocumentBytes, text parts
// by maxKYCTextBytes. Unknown parts are skipped.
func readKYCForm(r *http.Request) (contact.KYCSubmission, error) {
	k := contact.KYCSubmission{Documents: map[string][]byte{}}
	texts := map[string]*string{
		"email": &k.Email, "document_type": &k.DocumentType, "document_number": &k.DocumentNumber,
		"issue_date": &k.IssueDate, "expiry_date": &k.ExpiryDate, "issue_country": &k.IssueCountry,
		"nationality": &k.Nationality, "webhook_notification": &k.WebhookNotification,
	}
	limit := func(name string) int64 {
		switch {
		case slices.Contains(contact.DocumentParts, name):
			return contact.MaxDocumentBytes
		case name == "webhook_notification":
			return contact.MaxWebhookNotificationBytes
		case texts[name] == nil:
			return skipPart
		}
		return maxKYCTextBytes
	}
	f := fault.Fields{}
	seen := map[string]bool{}
	err := readParts(r, "with the documents as file parts", limit, func(name string, data []byte, over bool) error {
		isFile := slices.Contains(contact.DocumentParts, name)
		switch {
		case seen[name]:
			f.Add(name, "is sent more than once")
		case over && isFile:
			return contact.DocumentTooLarge(name)
		case over:
			f.Add(name, fmt.Sprintf("is at most %d bytes", limit(name)))
		case isFile:
			k.Documents[name] = data
		default:
			*texts[name] = string(data)
			f.AddErr(textPartProblem(name, data))
		}
		seen[name] = true
		return nil
	})
	if err != nil {
		return k, err
	}
	return k, f.Err()
}

// textPartProblem checks a multipart text part by the input rule; a part
// that holds JSON (webhook_notification) has its strings checked too.
func textPartProblem(name string, data []byte) error {
	if name == "webhook_notification" {
		return input.JSONIn(name, data)
	}
	return input.Check(name, string(data))
}

func (a *API) resendVerification(w http.ResponseWriter, r *http.Request) {
	var req contact.ResendRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	view := func(m any) any {
		out := resendAnswer{Status: "Ok"}
		if a.Env == Sandbox {
			out.MessageID = m.(contact.Message).ID
		}
		return out
	}
	expect(r, http.StatusOK, view)
	m, err := inTx(a, r, func(tx *store.Tx) (contact.Message, error) {
		return a.Contacts.ResendVerification(r.Context(), tx, principal(r), req)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, view(m))
}

func (a *API) listVerificationMessages(w http.ResponseWriter, r *http.Request) {
	q, lq := a.contactListQuery(r)
	lq.Email = q.str("email")
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	l, err := a.Contacts.ListMessages(r.Context(), principal(r), lq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, messagePage{PerPage: lq.PerPage, Page: lq.Page, TotalPage: contactTotalPages(l.Total, lq.PerPage),
		Total: l.Total, Records: l.Records})
}

func (a *API) customerDetail(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	id := q.str("id")
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	c, err := a.Contacts.CustomerDetail(r.Context(), principal(r), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, c)
}

func (a *API) listCustomers(w http.ResponseWriter, r *http.Request) {
	q, lq := a.contactListQuery(r)
	lq.Email, lq.ExternalID = q.str("email"), q.str("external_id")
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	l, err := a.Contacts.ListCustomers(r.Context(), principal(r), lq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, customerPage{PerPage: lq.PerPage, Page: lq.Page, TotalPage: contactTotalPages(l.Total, lq.PerPage),
		Total: l.Total, Records: l.Records})
}
