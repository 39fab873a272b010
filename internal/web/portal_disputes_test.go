package web_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"payd/internal/dispute"
	"payd/internal/gateway"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

// evidence posts the evidence form of dispute uuid's page: fields and
// files (name → content).
func (b *browser) evidence(uuid string, fields map[string]string, files map[string][]byte) answer {
	b.t.Helper()
	page := "/portal/disputes/" + uuid
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("csrf_token", b.csrf(page))
	for k, v := range fields {
		w.WriteField(k, v)
	}
	for name, data := range files {
		part, _ := w.CreateFormFile("files", name)
		part.Write(data)
	}
	w.Close()
	req, err := http.NewRequest("POST", b.base+page+"/evidence", &body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: string(raw)}
}

// openDispute has the sandbox make and pay a card link of p's merchant
// and dispute it.
func openDispute(t *testing.T, e *servertest.Env, p merchant.Principal) dispute.Dispute {
	t.Helper()
	ctx := context.Background()
	typ, id, err := e.Gateway.SandboxPaidPayment(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	d, err := store.Do(ctx, e.DB, func(tx *store.Tx) (dispute.Dispute, error) {
		return e.Disputes.OpenSandbox(ctx, tx, p, dispute.SandboxRequest{PaymentType: typ, PaymentID: gateway.PaymentID(id)})
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func pngBytes(t *testing.T) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var rawUTC = regexp.MustCompile(`\d\d:\d\d(:\d\d(\.\d+)?)?Z`)

// TestPortalDisputes: finance sees the merchant's disputes with due dates
// in its zone, stages evidence (text over lines and a PNG it downloads
// back), submits it, and accepts another dispute, each a form answering
// 303 to the dispute's page and written to the audit log; a viewer and a
// developer may not open the pages; another merchant's user gets 404.
func TestPortalDisputes(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "NZD")["NZD"]
		other := e.Merchant(t, "NZD")["NZD"]
		d := openDispute(t, e, p)
		srv := portalServer(t, e)
		for _, role := range []merchant.Role{merchant.Viewer, merchant.Developer} {
			b := signedIn(t, e, srv, p.MerchantID, string(role)+"@shop.example", role)
			if a := b.do("GET", "/portal/disputes", nil); a.status != http.StatusForbidden {
				t.Errorf("%s's /portal/disputes: %d, want 403", role, a.status)
			}
		}
		fin := signedIn(t, e, srv, p.MerchantID, "finance@shop.example", merchant.Finance)
		list := fin.do("GET", "/portal/disputes", nil)
		if list.status != 200 || !strings.Contains(list.body, d.UUID) || !strings.Contains(list.body, "10.00 NZD") || rawUTC.MatchString(list.body) ||
			!strings.Contains(list.body, "AEDT") && !strings.Contains(list.body, "AEST") {
			t.Errorf("list: %d %.2000s", list.status, list.body)
		}
		if a := fin.do("GET", "/portal/disputes?status=open", nil); a.status != 422 {
			t.Errorf("an unknown status filter: %d, want 422", a.status)
		}
		img := pngBytes(t)
		staged := fin.follow(fin.evidence(d.UUID, map[string]string{"customer_communication": "Line one\r\nLine two", "submit": "false"},
			map[string][]byte{"photo.png": img}))
		if !strings.Contains(staged.body, "The evidence is saved") || !strings.Contains(staged.body, "photo.png") || !strings.Contains(staged.body, "needs_response") {
			t.Errorf("staged page %.3000s", staged.body)
		}
		if got := auditActions(t, e, p.MerchantID); got[0] != portal.AuditDisputeEvidence {
			t.Errorf("audit after staging %v", got)
		}
		link := regexp.MustCompile(`href="(/portal/disputes/[A-Z0-9]+/files/[A-Z0-9]+)"`).FindStringSubmatch(staged.body)
		if link == nil {
			t.Fatalf("no file link on %.2000s", staged.body)
		}
		if f := fin.do("GET", link[1], nil); f.status != 200 || f.body != string(img) || f.header.Get("Content-Type") != "application/octet-stream" ||
			!strings.Contains(f.header.Get("Content-Disposition"), "photo.png") {
			t.Errorf("file: %d %s %s", f.status, f.header.Get("Content-Type"), f.header.Get("Content-Disposition"))
		}
		if a := fin.evidence(d.UUID, map[string]string{"submit": "false"}, map[string][]byte{"notes.pdf": []byte("plain text")}); a.status != 422 {
			t.Errorf("a file that is no PDF: %d, want 422", a.status)
		}
		submitted := fin.follow(fin.evidence(d.UUID, map[string]string{"submit": "true"}, nil))
		if !strings.Contains(submitted.body, "under_review") || strings.Contains(submitted.body, `id="accept"`) {
			t.Errorf("submitted page %.3000s", submitted.body)
		}
		if got := auditActions(t, e, p.MerchantID); got[0] != portal.AuditDisputeSubmitted {
			t.Errorf("audit after submitting %v", got)
		}

		second := openDispute(t, e, p)
		accepted := fin.follow(fin.post("/portal/disputes/"+second.UUID, "/portal/disputes/"+second.UUID+"/accept", nil))
		if !strings.Contains(accepted.body, "You accepted the dispute") || !strings.Contains(accepted.body, "lost") || !strings.Contains(accepted.body, "25.00 NZD") {
			t.Errorf("accepted page %.3000s", accepted.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/disputes/{uuid}/accept")
		if a := fin.post("/portal/disputes/"+d.UUID, "/portal/disputes/"+d.UUID+"/accept", nil); a.status != http.StatusConflict {
			t.Errorf("accept under review: %d, want 409", a.status)
		}

		stranger := signedIn(t, e, srv, other.MerchantID, "finance@other.example", merchant.Finance)
		for _, path := range []string{"/portal/disputes/" + d.UUID, link[1]} {
			if a := stranger.do("GET", path, nil); a.status != http.StatusNotFound {
				t.Errorf("another merchant's %s: %d, want 404", path, a.status)
			}
		}
		if a := stranger.do("GET", "/portal/disputes", nil); strings.Contains(a.body, d.UUID) {
			t.Errorf("another merchant lists the dispute")
		}
	})
}
