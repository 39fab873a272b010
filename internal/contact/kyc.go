package contact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Document types a KYC submission may carry.
const (
	Passport       = "passport"
	NationalID     = "national_id"
	DrivingLicense = "driving_license"
)

// File parts of a KYC submission.
const (
	PartSelfie = "selfie"
	PartFront  = "id_doc_front_side"
	PartBack   = "id_doc_back_side"
)

// DocumentParts are the file parts of POST /v2/contacts/submit_kyc, in order.
var DocumentParts = []string{PartSelfie, PartFront, PartBack}

// MaxDocumentBytes bounds each KYC file (5 MB).
const MaxDocumentBytes = 5 << 20

// MaxWebhookNotificationBytes bounds the webhook_notification JSON.
const MaxWebhookNotificationBytes = 4 << 10

const maxDocumentNumberLen = 64

// Webhook event types of KYC status changes; the body is the contact.
const (
	EventKYCPending  = "kyc.pending"
	EventKYCApproved = "kyc.approved"
	EventKYCFailed   = "kyc.failed"
)

// KYCSubmission is the multipart form of POST /v2/contacts/submit_kyc.
type KYCSubmission struct {
	Email, DocumentType, DocumentNumber, IssueDate, ExpiryDate, IssueCountry, Nationality string
	// WebhookNotification is the JSON of the webhook_notification part:
	// {"endpoint_url": …, "authorization_header": …}; empty for none.
	WebhookNotification string
	// Documents holds the files by part name; a part not sent is absent.
	Documents map[string][]byte
}

// document is a checked KYC file.
type document struct {
	part, contentType, sha256 string
	content                   []byte
}

// DocumentTooLarge is the 413 of a file over MaxDocumentBytes, naming its part.
func DocumentTooLarge(part string) error {
	problem := fmt.Sprintf("is larger than %d bytes (5 MB)", MaxDocumentBytes)
	return &fault.Error{Kind: fault.TooLarge, Code: fault.CodeTooLarge, Message: part + " " + problem,
		Fields: map[string]string{part: problem}}
}

// validate checks the form; today is the merchant's date.
func (k *KYCSubmission) validate(today time.Time, policy webhook.Policy) (webhook.Target, []document, error) {
	for _, part := range DocumentParts {
		if len(k.Documents[part]) > MaxDocumentBytes {
			return webhook.Target{}, nil, DocumentTooLarge(part)
		}
	}
	f := fault.Fields{}
	text(f, "email", &k.Email, maxEmailLen, true)
	oneOf(f, "document_type", &k.DocumentType, true, Passport, NationalID, DrivingLicense)
	text(f, "document_number", &k.DocumentNumber, maxDocumentNumberLen, true)
	issued := date(f, "issue_date", &k.IssueDate, true)
	expires := date(f, "expiry_date", &k.ExpiryDate, true)
	if !issued.IsZero() && issued.After(day(today)) {
		f.Add("issue_date", "must not be later than today")
	}
	switch {
	case expires.IsZero():
	case !issued.IsZero() && !expires.After(issued):
		f.Add("expiry_date", "must be later than issue_date")
	case expires.Before(day(today)):
		f.Add("expiry_date", "is past: the document has expired")
	}
	country(f, "issue_country", &k.IssueCountry, true)
	country(f, "nationality", &k.Nationality, true)
	target := webhookTarget(f, k.WebhookNotification, policy)
	docs := k.documents(f)
	return target, docs, f.Err()
}

// webhookTarget reads the webhook_notification part (a JSON object).
func webhookTarget(f fault.Fields, raw string, policy webhook.Policy) webhook.Target {
	const name = "webhook_notification"
	var t webhook.Target
	if strings.TrimSpace(raw) == "" {
		return t
	}
	if len(raw) > MaxWebhookNotificationBytes || json.Unmarshal([]byte(raw), &t) != nil {
		f.Add(name, `must be a JSON object such as {"endpoint_url":"https://example.com/hooks","authorization_header":"Bearer abc"}`)
		return webhook.Target{}
	}
	if err := policy.Validate(name, t); err != nil {
		if e, ok := fault.As(err); ok {
			for member, problem := range e.Fields {
				f.Add(member, problem)
			}
			return webhook.Target{}
		}
		f.Add(name, err.Error())
	}
	return t
}

// documents checks each file: present (the back side may be left out of a
// passport submission), not empty, and a PNG, JPEG or PDF by its content.
func (k *KYCSubmission) documents(f fault.Fields) []document {
	var docs []document
	for _, part := range DocumentParts {
		data, ok := k.Documents[part]
		switch {
		case !ok && part == PartBack && k.DocumentType == Passport:
			continue
		case !ok:
			f.Add(part, "is required: attach the file as a multipart part named "+part)
			continue
		case len(data) == 0:
			f.Add(part, "is an empty file")
			continue
		}
		ct, ok := input.DocumentType(data)
		if !ok {
			f.Add(part, "must be a PNG, JPEG or PDF file (its content looks like "+ct+")")
			continue
		}
		sum := sha256.Sum256(data)
		docs = append(docs, document{part: part, contentType: ct, sha256: hex.EncodeToString(sum[:]), content: data})
	}
	return docs
}

// SubmitKYC records a contact's KYC documents and puts its KYC status to
// pending; it returns the submission's id, for Review. Each change is sent to the submission's webhook_notification
// (kyc.pending, kyc.approved, kyc.failed) with the contact as its body,
// emitted in the transaction that makes the change.
//
// A contact whose KYC is approved cannot submit again (409 INVALID_STATE);
// one that failed (or is pending) may.
func (s *Service) SubmitKYC(ctx context.Context, tx *store.Tx, p merchant.Principal, k KYCSubmission) (int64, error) {
	now := s.clock.Of(p)
	target, docs, err := k.validate(now, s.policy)
	if err != nil {
		return 0, err
	}
	c, err := contactByEmail(ctx, tx, p.MerchantID, k.Email, true)
	if err != nil {
		return 0, err
	}
	if c.KYCStatus == KYCApproved {
		return 0, fault.State("the KYC of contact %s is already approved", c.Email)
	}
	id, err := insertSubmission(ctx, tx, p.MerchantID, c.id, k, target, docs, now)
	if err != nil {
		return 0, err
	}
	return id, s.setKYC(ctx, tx, p.MerchantID, &c, KYCPending, target, now)
}

func insertSubmission(ctx context.Context, tx *store.Tx, merchantID string, contactID int64, k KYCSubmission,
	target webhook.Target, docs []document, now time.Time) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO kyc_submissions (merchant_id, contact_id, document_type, document_number,
		issue_date, expiry_date, issue_country, nationality, endpoint_url, authorization_header, status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		merchantID, contactID, k.DocumentType, k.DocumentNumber, k.IssueDate, k.ExpiryDate, k.IssueCountry, k.Nationality,
		target.EndpointURL, target.AuthorizationHeader, string(KYCPending), now.UnixMilli()).Scan(&id); err != nil {
		return 0, fmt.Errorf("store kyc submission: %w", err)
	}
	for _, d := range docs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO kyc_documents (submission_id, merchant_id, part, content_type, size_bytes,
			sha256, content, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			id, merchantID, d.part, d.contentType, len(d.content), d.sha256, d.content, now.UnixMilli()); err != nil {
			return 0, fmt.Errorf("store kyc document %s: %w", d.part, err)
		}
	}
	return id, nil
}

// setKYC moves c to status and notifies target, in tx.
func (s *Service) setKYC(ctx context.Context, tx *store.Tx, merchantID string, c *Contact, status KYCStatus, target webhook.Target, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE contacts SET kyc_status = $1, updated_at = $2 WHERE id = $3 AND merchant_id = $4`,
		string(status), now.UnixMilli(), c.id, merchantID); err != nil {
		return fmt.Errorf("set kyc of contact %s: %w", c.UUID, err)
	}
	c.KYCStatus, c.UpdatedAt = status, clock.Time{T: now}
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: merchantID, Type: "kyc." + string(status),
		RecordUUID: c.UUID, Target: target, Payload: c, At: now})
	return err
}

// sandboxVerdict is the simulated review (CONTRACT §8): a document number
// beginning with FAIL fails, any other is approved.
func sandboxVerdict(documentNumber string) KYCStatus {
	if strings.HasPrefix(documentNumber, "FAIL") {
		return KYCFailed
	}
	return KYCApproved
}

// Review decides a pending submission: the sandbox's simulated review, run
// at once in a second transaction after SubmitKYC's, so that pending is a
// committed, notified state before it. Only the contact's latest submission
// moves its status, so an older review finishing late changes nothing.
func (s *Service) Review(ctx context.Context, tx *store.Tx, p merchant.Principal, submissionID int64) error {
	var email string
	if err := tx.QueryRowContext(ctx, `SELECT c.email FROM kyc_submissions k JOIN contacts c ON c.merchant_id = k.merchant_id AND c.id = k.contact_id
		WHERE k.id = $1 AND k.merchant_id = $2`, submissionID, p.MerchantID).Scan(&email); err != nil {
		return fmt.Errorf("review kyc submission %d: %w", submissionID, err)
	}
	// Lock the contact first: submissions of one contact are decided one at a time.
	c, err := contactByEmail(ctx, tx, p.MerchantID, email, true)
	if err != nil {
		return err
	}
	var (
		number, status, endpoint, auth string
		latest                         int64
	)
	if err := tx.QueryRowContext(ctx, `SELECT document_number, status, endpoint_url, authorization_header,
		(SELECT max(id) FROM kyc_submissions WHERE merchant_id = $3 AND contact_id = $2)
		FROM kyc_submissions WHERE id = $1 AND merchant_id = $3`, submissionID, c.id, p.MerchantID).Scan(&number, &status, &endpoint, &auth, &latest); err != nil {
		return fmt.Errorf("review kyc submission %d: %w", submissionID, err)
	}
	if KYCStatus(status) != KYCPending {
		return nil
	}
	now := s.clock.Of(p)
	verdict := sandboxVerdict(number)
	if _, err := tx.ExecContext(ctx, `UPDATE kyc_submissions SET status = $1, decided_at = $2 WHERE id = $3 AND merchant_id = $4`,
		string(verdict), now.UnixMilli(), submissionID, p.MerchantID); err != nil {
		return fmt.Errorf("review kyc submission %d: %w", submissionID, err)
	}
	if latest != submissionID {
		return nil
	}
	return s.setKYC(ctx, tx, p.MerchantID, &c, verdict, webhook.Target{EndpointURL: endpoint, AuthorizationHeader: auth}, now)
}
