package contact

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"payd/internal/fault"
	"payd/internal/webhook"
)

func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func testJPEG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 4)), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var testPDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

func validSubmission(t *testing.T) KYCSubmission {
	return KYCSubmission{
		Email: "jane@example.com", DocumentType: NationalID, DocumentNumber: "N1234567",
		IssueDate: "2020-01-01", ExpiryDate: "2030-01-01", IssueCountry: "au", Nationality: "AU",
		WebhookNotification: `{"endpoint_url":"https://example.com/hook","authorization_header":"Basic abc"}`,
		Documents:           map[string][]byte{PartSelfie: testJPEG(t), PartFront: testPNG(t), PartBack: testPDF},
	}
}

// TestKYCValidate: files are judged by content (PNG, JPEG, PDF), every part
// is required but a passport's back side, and each wrong member is named.
func TestKYCValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(k *KYCSubmission)
		field  string
	}{
		{name: "valid", change: func(k *KYCSubmission) {}},
		{name: "passport without a back side", change: func(k *KYCSubmission) {
			k.DocumentType = Passport
			delete(k.Documents, PartBack)
		}},
		{name: "no webhook", change: func(k *KYCSubmission) { k.WebhookNotification = "" }},
		{name: "national id without a back side", change: func(k *KYCSubmission) { delete(k.Documents, PartBack) }, field: PartBack},
		{name: "no selfie", change: func(k *KYCSubmission) { delete(k.Documents, PartSelfie) }, field: PartSelfie},
		{name: "empty front side", change: func(k *KYCSubmission) { k.Documents[PartFront] = nil }, field: PartFront},
		{name: "text named .png", change: func(k *KYCSubmission) { k.Documents[PartFront] = []byte("this is not an image, whatever its name") }, field: PartFront},
		{name: "gif", change: func(k *KYCSubmission) { k.Documents[PartSelfie] = []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;") }, field: PartSelfie},
		{name: "html", change: func(k *KYCSubmission) { k.Documents[PartBack] = []byte("<html><script>alert(1)</script>") }, field: PartBack},
		{name: "no email", change: func(k *KYCSubmission) { k.Email = "" }, field: "email"},
		{name: "document type", change: func(k *KYCSubmission) { k.DocumentType = "visa" }, field: "document_type"},
		{name: "no document number", change: func(k *KYCSubmission) { k.DocumentNumber = " " }, field: "document_number"},
		{name: "issue date form", change: func(k *KYCSubmission) { k.IssueDate = "01/01/2020" }, field: "issue_date"},
		{name: "issued in the future", change: func(k *KYCSubmission) { k.IssueDate = "2025-03-11" }, field: "issue_date"},
		{name: "expires before issue", change: func(k *KYCSubmission) { k.ExpiryDate = "2019-12-31" }, field: "expiry_date"},
		{name: "expired", change: func(k *KYCSubmission) { k.ExpiryDate = "2025-03-09" }, field: "expiry_date"},
		{name: "issue country", change: func(k *KYCSubmission) { k.IssueCountry = "Australia" }, field: "issue_country"},
		{name: "nationality", change: func(k *KYCSubmission) { k.Nationality = "" }, field: "nationality"},
		{name: "webhook not JSON", change: func(k *KYCSubmission) { k.WebhookNotification = "https://example.com/hook" }, field: "webhook_notification"},
		{name: "webhook without endpoint", change: func(k *KYCSubmission) { k.WebhookNotification = `{"authorization_header":"x"}` }, field: "webhook_notification.endpoint_url"},
		{name: "webhook not http", change: func(k *KYCSubmission) { k.WebhookNotification = `{"endpoint_url":"ftp://example.com"}` }, field: "webhook_notification.endpoint_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := validSubmission(t)
			tt.change(&k)
			_, _, err := k.validate(today, webhook.Policy{})
			if got := fieldOf(err); got != tt.field {
				t.Errorf("validate names %q, want %q (%v)", got, tt.field, err)
			}
		})
	}
}

// TestKYCValidateDocuments: the checked files carry the sniffed type, the
// size and the SHA-256 of their bytes.
func TestKYCValidateDocuments(t *testing.T) {
	t.Parallel()
	k := validSubmission(t)
	target, docs, err := k.validate(today, webhook.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if target.EndpointURL != "https://example.com/hook" || target.AuthorizationHeader != "Basic abc" {
		t.Errorf("target = %+v", target)
	}
	want := map[string]string{PartSelfie: "image/jpeg", PartFront: "image/png", PartBack: "application/pdf"}
	if len(docs) != len(want) {
		t.Fatalf("%d documents, want %d", len(docs), len(want))
	}
	for _, d := range docs {
		if d.contentType != want[d.part] || len(d.sha256) != 64 || !bytes.Equal(d.content, k.Documents[d.part]) {
			t.Errorf("%s: type %s, sha256 %q; want type %s", d.part, d.contentType, d.sha256, want[d.part])
		}
	}
	if k.IssueCountry != "AU" {
		t.Errorf("issue_country kept as %q, want AU", k.IssueCountry)
	}
}

// TestKYCValidateTooLarge: a file over 5 MB is a 413 naming its part,
// whatever else is wrong.
func TestKYCValidateTooLarge(t *testing.T) {
	t.Parallel()
	k := validSubmission(t)
	k.Email = ""
	k.Documents[PartFront] = append(testPNG(t), make([]byte, MaxDocumentBytes)...)
	_, _, err := k.validate(today, webhook.Policy{})
	e, ok := fault.As(err)
	if !ok || e.Kind != fault.TooLarge || e.Fields[PartFront] == "" {
		t.Errorf("err = %v, want TooLarge naming %s", err, PartFront)
	}
}

func TestSandboxVerdict(t *testing.T) {
	t.Parallel()
	for number, want := range map[string]KYCStatus{"N123": KYCApproved, "FAIL123": KYCFailed, "FAIL": KYCFailed, "fail1": KYCApproved, "XFAIL": KYCApproved} {
		if got := sandboxVerdict(number); got != want {
			t.Errorf("sandboxVerdict(%q) = %s, want %s", number, got, want)
		}
	}
}
