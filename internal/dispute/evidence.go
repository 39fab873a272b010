package dispute

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/input"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
)

// Bounds of evidence (CONTRACT §22).
const (
	MaxFiles     = 5
	MaxFileBytes = 5 << 20
	// MaxTextLen bounds each text field, in characters.
	MaxTextLen = 20_000
	// maxNameLen bounds a file's name as kept (longer names are cut).
	maxNameLen = 255
	// MaxUploadBytes bounds one evidence upload, on every entry point: its
	// files, its four text fields (UTF-8: 4 bytes a character at most) and
	// room for the parts' headers.
	MaxUploadBytes = MaxFiles*(MaxFileBytes+1) + 4*MaxTextLen*4 + 64<<10
)

// TextFields are the evidence's text fields, as the form names them.
var TextFields = []string{"product_description", "customer_communication", "refund_policy", "uncategorized_text"}

// Upload is one evidence file as sent.
type Upload struct {
	Name string
	Data []byte
}

// EvidenceInput is one POST /v2/disputes/evidence: the text fields sent
// (absent ones stay as staged), files to add, and whether to submit.
type EvidenceInput struct {
	Text   map[string]string
	Files  []Upload
	Submit bool
}

// sniff tells a file's type by its content (input.DocumentType): PDF, PNG
// or JPEG, or "".
func sniff(data []byte) string {
	if ct, ok := input.DocumentType(data); ok {
		return ct
	}
	return ""
}

// CheckText checks one text field's value as the form sent it.
func CheckText(name, value string) error {
	if p := input.Problem(name, value); p != "" {
		return fault.Field(name, p)
	}
	if utf8.RuneCountInString(value) > MaxTextLen {
		return fault.Field(name, "must be at most "+strconv.Itoa(MaxTextLen)+" characters")
	}
	return nil
}

// Answer stages, and with Submit sends, the caller's evidence for dispute
// uuid, which must still need a response (409 INVALID_STATE otherwise).
// Text fields sent replace the staged ones; files are added, each a PDF,
// PNG or JPEG by content and at most 5 in all (422 naming files). Submitted
// evidence must hold something (422 naming evidence): the dispute is then
// under review and dispute.updated goes out.
func (s *Service) Answer(ctx context.Context, tx *store.Tx, p merchant.Principal, uuid string, in EvidenceInput) (Dispute, error) {
	f := fault.Fields{}
	for name, value := range in.Text {
		f.AddErr(CheckText(name, value))
	}
	for _, up := range in.Files {
		if len(up.Data) > MaxFileBytes {
			return Dispute{}, fault.New(fault.TooLarge, fault.CodeTooLarge, "file %q is larger than %d MB", up.Name, MaxFileBytes>>20)
		}
		if sniff(up.Data) == "" {
			f.Add("files", fmt.Sprintf("%q is not a PDF, PNG or JPEG file (told by its content)", up.Name))
		}
	}
	if err := f.Err(); err != nil {
		return Dispute{}, err
	}
	return s.change(ctx, tx, p, uuid, func(r *row, now time.Time) error {
		if err := r.needsResponse(); err != nil {
			return err
		}
		if n := len(r.evidence.Files) + len(in.Files); n > MaxFiles {
			return fault.Field("files", fmt.Sprintf("a dispute keeps at most %d files; this would make %d", MaxFiles, n))
		}
		e := &r.evidence
		for name, value := range in.Text {
			switch name {
			case "product_description":
				e.ProductDescription = value
			case "customer_communication":
				e.CustomerCommunication = value
			case "refund_policy":
				e.RefundPolicy = value
			case "uncategorized_text":
				e.UncategorizedText = value
			}
		}
		for _, up := range in.Files {
			file, err := addFile(ctx, tx, r, up, now)
			if err != nil {
				return err
			}
			e.Files = append(e.Files, file)
		}
		if in.Submit {
			if e.empty() {
				return fault.Field("evidence", "is empty: send a text field or a file to submit")
			}
			ms := now.UnixMilli()
			r.status, r.submittedAt = UnderReview, &ms
		}
		if err := saveEvidence(ctx, tx, r, now); err != nil {
			return err
		}
		if in.Submit {
			return s.emit(ctx, tx, *r, EventUpdated, now)
		}
		return nil
	})
}

// addFile stores one evidence file of r.
func addFile(ctx context.Context, tx *store.Tx, r *row, up Upload, now time.Time) (File, error) {
	name := up.Name
	if !utf8.ValidString(name) {
		name = "file"
	}
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
		for !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	sum := sha256.Sum256(up.Data)
	file := File{ID: store.RandomID(store.UUIDLen), Name: name, ContentType: sniff(up.Data), Size: int64(len(up.Data)),
		SHA256: hex.EncodeToString(sum[:]), CreatedAt: clock.Time{T: now}}
	if _, err := tx.ExecContext(ctx, `INSERT INTO dispute_files (merchant_id, dispute_uuid, id, name, content_type, size, sha256, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, r.merchantID, r.uuid, file.ID, file.Name, file.ContentType, file.Size, file.SHA256,
		up.Data, now.UnixMilli()); err != nil {
		return File{}, fmt.Errorf("store evidence file of dispute %s: %w", r.uuid, err)
	}
	return file, nil
}

// FileContent is the caller's evidence file id of dispute uuid, and its
// bytes; another merchant's dispute or file answers as not found.
func (s *Service) FileContent(ctx context.Context, p merchant.Principal, uuid, id string) (File, []byte, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, uuid, false)
	if err != nil {
		return File{}, nil, err
	}
	for _, f := range r.evidence.Files {
		if f.ID != id {
			continue
		}
		var data []byte
		if err := s.db.Read().QueryRowContext(ctx, `SELECT data FROM dispute_files WHERE merchant_id = $1 AND dispute_uuid = $2 AND id = $3`,
			p.MerchantID, uuid, id).Scan(&data); err != nil {
			return File{}, nil, fmt.Errorf("read evidence file %s: %w", id, err)
		}
		return f, data, nil
	}
	return File{}, nil, fault.NotFoundf("dispute %s has no file %s", uuid, id)
}

// SandboxRequest is the body of POST /v2/sandbox/disputes.
type SandboxRequest struct {
	PaymentType string            `json:"payment_type,omitempty" doc:"gateway_payment or payin_link; with payment_id. Absent with payment_id absent." example:"payin_link"`
	PaymentID   gateway.PaymentID `json:"payment_id,omitempty" doc:"The paid card payment: a gateway payment's id (number or string) or a payin link's uuid. Absent (with payment_type absent): the sandbox makes a card payment (a payin link in NZD, else HKD, else a gateway payment in AUD that notifies no one), pays it, and disputes that." example:"k3j9x0c2m4q8w1e5r7t6y2u0i9"`
	Reason      string            `json:"reason,omitempty" doc:"One of fraudulent, duplicate, product_not_received, product_unacceptable, credit_not_processed, general (default)." example:"product_not_received"`
	Amount      money.Input       `json:"amount,omitempty" doc:"Absent: all of the payment that is not refunded." example:"10.00"`
}

// ResolveRequest is the body of POST /v2/sandbox/disputes/resolve.
type ResolveRequest struct {
	UUID    string `json:"uuid" required:"true" example:"k3j9x0c2m4q8w1e5r7t6y2u0i9"`
	Outcome string `json:"outcome" required:"true" enum:"won,lost" example:"won"`
}

// UUIDRequest names a dispute (POST /v2/disputes/accept).
type UUIDRequest struct {
	UUID string `json:"uuid" required:"true" example:"k3j9x0c2m4q8w1e5r7t6y2u0i9"`
}

// OpenSandbox opens a dispute as the sandbox's network would
// (POST /v2/sandbox/disputes) of the paid card payment req names. A
// request without payment_id is given the payment gateway.SandboxPaidPayment made,
// before its transaction.
func (s *Service) OpenSandbox(ctx context.Context, tx *store.Tx, p merchant.Principal, req SandboxRequest) (Dispute, error) {
	if req.PaymentType == "" {
		return Dispute{}, fault.Field("payment_type", "is required with payment_id")
	}
	c, err := s.gateway.LockCardPayment(ctx, tx, p.MerchantID, req.PaymentType, string(req.PaymentID))
	if err != nil {
		return Dispute{}, err
	}
	var amount int64
	if !req.Amount.IsZero() {
		if amount, _, err = money.ParseField("amount", req.Amount, c.Currency); err != nil {
			return Dispute{}, err
		}
	}
	return s.Open(ctx, tx, c, Opening{Reason: req.Reason, ReasonCode: "sandbox", Amount: amount})
}

// SandboxPayment fills in a sandbox request without payment_id: a card
// payment the sandbox makes and pays (gateway.SandboxPaidPayment), in
// transactions of its own.
func (s *Service) SandboxPayment(ctx context.Context, p merchant.Principal, req *SandboxRequest) error {
	if req.PaymentID != "" {
		return nil
	}
	if req.PaymentType != "" {
		return fault.Field("payment_id", "is required with payment_type "+req.PaymentType)
	}
	if !req.Amount.IsZero() {
		return fault.Field("amount", "needs payment_id: the sandbox's own payment is disputed whole")
	}
	typ, id, err := s.gateway.SandboxPaidPayment(ctx, p)
	if err != nil {
		return err
	}
	req.PaymentType, req.PaymentID = typ, gateway.PaymentID(id)
	return nil
}
