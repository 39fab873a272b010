package e2e

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/gateway"
	"payd/internal/httpapi"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// Disputes of card payments and card refunds (CONTRACT §22, §25).

// paidGateway creates a gateway payment of amount and pays it with card
// number on its checkout page; it returns the payment's id.
func (p *payd) paidGateway(t *testing.T, m creds, order, amount, number, hooks string) string {
	t.Helper()
	r := p.gatewayCreate(p.bearerFor(m).Token, gatewayOrder(order, amount, "https://shop.example/thanks", hooks))
	want(t, r, 200)
	created := r.JSON(t)
	if status, _ := postCheckout(t, str(created, "redirect_url"), cardForm(number)); status != 303 {
		t.Fatalf("pay %s: checkout answered %d", order, status)
	}
	return fmt.Sprint(created["payment_id"])
}

// paidLink creates an NZD card link of amount and pays it by card.
func (p *payd) paidLink(t *testing.T, m creds, amount, number string) string {
	t.Helper()
	created := p.newLink(m, linkBody("nz_card_nzd", "NZD", amount, "https://shop.example/paid", "", ""))
	page := str(created, "payment_link_url")
	_, _, csrf := linkPage(t, page)
	if s, _, body := linkForm(t, page, csrf, cardForm(number), true); s != 200 {
		t.Fatalf("pay link: %d %s", s, body)
	}
	return str(created, "uuid")
}

// evidenceForm is a POST /v2/disputes/evidence body: fields, and files
// parts (name → content), in order.
func evidenceForm(t testing.TB, fields map[string]string, files ...kycFile) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for name, v := range fields {
		w.WriteField(name, v)
	}
	for _, f := range files {
		part, err := w.CreateFormFile("files", f.filename)
		if err != nil {
			t.Fatal(err)
		}
		part.Write(f.data)
	}
	w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func (p *payd) evidence(as creds, fields map[string]string, files ...kycFile) response {
	p.t.Helper()
	body, ct := evidenceForm(p.t, fields, files...)
	return p.do(req{method: "POST", path: "/v2/disputes/evidence", as: &as, body: body, header: map[string]string{"Content-Type": ct}})
}

func (p *payd) openDispute(t *testing.T, as creds, body map[string]any) map[string]any {
	t.Helper()
	r := p.post("/v2/sandbox/disputes", as, body)
	want(t, r, 201)
	return r.JSON(t)
}

// recordsOf are the balance records whose reference_id is ref, by
// transaction type: type → status.
func (p *payd) recordsOf(t *testing.T, as creds, currency, ref string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rec := range p.history(as, "currency="+currency+"&size=100").Records {
		if rec.ReferenceID == ref {
			out[rec.TransactionType] = rec.Status
		}
	}
	return out
}

var pdfFile = kycFile{filename: "receipt.pdf", data: []byte("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n")}

// TestDisputeLifecycle: a sandbox dispute of a paid gateway payment takes
// its amount from available into a waiting dispute record and goes to the
// payment's notification target; evidence is staged (text replaced, files
// added, types by content, at most 5) and submitted; refunds and a second
// dispute of it are 409; won brings the money back (the record failed).
// Accepting another loses it with the 25.00 fee (both records done).
// Another merchant reaches none of it.
func TestDisputeLifecycle(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		other := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		a := p.paidGateway(t, m, "D-1", "49.95", "4242424242424242", hooks.url)
		if got := p.balanceOf(m, "AUD").Available.String(); got != "49.95" {
			t.Fatalf("available after paying %s", got)
		}
		d := p.openDispute(t, m, map[string]any{"payment_type": "gateway_payment", "payment_id": a, "reason": "product_not_received"})
		uuid := str(d, "uuid")
		created, _ := time.Parse(time.RFC3339Nano, str(d, "created_at"))
		due, _ := time.Parse(time.RFC3339Nano, str(d, "due_by"))
		if str(d, "status") != "needs_response" || str(d, "amount") != "49.95" || str(d, "currency") != "AUD" || str(d, "payment_id") != a ||
			str(d, "reason") != "product_not_received" || d["fee"] != nil || due.Sub(created) != 7*24*time.Hour {
			t.Errorf("opened %v", d)
		}
		b := p.balanceOf(m, "AUD")
		if b.Available.String() != "0.00" || b.Outgoing.String() != "49.95" {
			t.Errorf("balance while disputed: available %s outgoing %s", b.Available, b.Outgoing)
		}
		if got := p.recordsOf(t, m, "AUD", uuid); got["dispute"] != "waiting" {
			t.Errorf("records of the dispute %v", got)
		}
		wantError(t, p.post("/v1/payment_gateways/refund", m, map[string]any{"payment_id": a}), 409, "INVALID_STATE", "")
		wantError(t, p.post("/v2/sandbox/disputes", m, map[string]any{"payment_type": "gateway_payment", "payment_id": a}), 409, "INVALID_STATE", "")

		// Staged evidence: text, then a PNG; a text file is refused by content.
		r := p.evidence(m, map[string]string{"uuid": uuid, "product_description": "A teapot", "refund_policy": "30 days"})
		want(t, r, 200)
		r = p.evidence(m, map[string]string{"uuid": uuid, "product_description": "A blue teapot"}, kycFile{"photo.png", kycPNG(t)})
		want(t, r, 200)
		staged := r.JSON(t)
		ev := staged["evidence"].(map[string]any)
		if str(staged, "status") != "needs_response" || str(ev, "product_description") != "A blue teapot" || str(ev, "refund_policy") != "30 days" ||
			len(ev["files"].([]any)) != 1 || str(ev["files"].([]any)[0].(map[string]any), "content_type") != "image/png" {
			t.Errorf("staged %s", r.Body)
		}
		wantError(t, p.evidence(m, map[string]string{"uuid": uuid}, kycFile{"notes.png", []byte("not an image")}), 422, "VALIDATION_FAILED", "files")
		five := []kycFile{pdfFile, pdfFile, pdfFile, pdfFile, pdfFile}
		wantError(t, p.evidence(m, map[string]string{"uuid": uuid}, five...), 422, "VALIDATION_FAILED", "files")
		big := kycFile{"big.pdf", append([]byte("%PDF-"), make([]byte, 5<<20)...)}
		wantError(t, p.evidence(m, map[string]string{"uuid": uuid}, big), 413, "TOO_LARGE", "")
		fileID := str(ev["files"].([]any)[0].(map[string]any), "id")
		fr := p.get("/v2/disputes/evidence/file?uuid="+uuid+"&id="+fileID, m)
		if fr.Status != 200 || fr.Header.Get("Content-Type") != "application/octet-stream" || !bytes.Equal(fr.Body, kycPNG(t)) {
			t.Errorf("evidence file: %d %s", fr.Status, fr.Header.Get("Content-Type"))
		}

		// Another merchant: nothing of it, by any id.
		wantError(t, p.get("/v2/disputes/detail?uuid="+uuid, other), 404, "NOT_FOUND", "")
		wantError(t, p.get("/v2/disputes/evidence/file?uuid="+uuid+"&id="+fileID, other), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/disputes/accept", other, map[string]any{"uuid": uuid}), 404, "NOT_FOUND", "")
		wantError(t, p.evidence(other, map[string]string{"uuid": uuid, "submit": "true", "uncategorized_text": "x"}), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/sandbox/disputes", other, map[string]any{"payment_type": "gateway_payment", "payment_id": a}), 404, "NOT_FOUND", "")
		if l := p.get("/v2/disputes", other).JSON(t); fmt.Sprint(l["total"]) != "0" {
			t.Errorf("another merchant lists %v", l)
		}

		// Submit, then nothing more is taken; the network decides: won.
		r = p.evidence(m, map[string]string{"uuid": uuid, "submit": "true"}, pdfFile)
		want(t, r, 200)
		if sub := r.JSON(t); str(sub, "status") != "under_review" || sub["evidence_submitted_at"] == nil {
			t.Errorf("submitted %s", r.Body)
		}
		wantError(t, p.post("/v2/disputes/accept", m, map[string]any{"uuid": uuid}), 409, "INVALID_STATE", "")
		wantError(t, p.evidence(m, map[string]string{"uuid": uuid, "uncategorized_text": "more"}), 409, "INVALID_STATE", "")
		r = p.post("/v2/sandbox/disputes/resolve", m, map[string]any{"uuid": uuid, "outcome": "won"})
		want(t, r, 200)
		if won := r.JSON(t); str(won, "status") != "won" || won["fee"] != nil {
			t.Errorf("won %s", r.Body)
		}
		wantError(t, p.post("/v2/sandbox/disputes/resolve", m, map[string]any{"uuid": uuid, "outcome": "lost"}), 409, "INVALID_STATE", "")
		if b := p.balanceOf(m, "AUD"); b.Available.String() != "49.95" || b.Outgoing.String() != "0.00" {
			t.Errorf("balance after won: available %s outgoing %s", b.Available, b.Outgoing)
		}
		if got := p.recordsOf(t, m, "AUD", uuid); got["dispute"] != "failed" || got["dispute_fee"] != "" {
			t.Errorf("records after won %v", got)
		}

		// Accepted: lost, with the fee.
		bID := p.paidGateway(t, m, "D-2", "20.00", "4242424242424242", hooks.url)
		lost := p.openDispute(t, m, map[string]any{"payment_type": "gateway_payment", "payment_id": bID, "amount": "15.00"})
		r = p.post("/v2/disputes/accept", m, map[string]any{"uuid": str(lost, "uuid")})
		want(t, r, 200)
		if acc := r.JSON(t); str(acc, "status") != "lost" || str(acc, "fee") != "25.00" {
			t.Errorf("accepted %s", r.Body)
		}
		// 49.95 + 20.00 - 15.00 - 25.00
		if got := p.balanceOf(m, "AUD").Available.String(); got != "29.95" {
			t.Errorf("available after a lost dispute %s, want 29.95", got)
		}
		if got := p.recordsOf(t, m, "AUD", str(lost, "uuid")); got["dispute"] != "done" || got["dispute_fee"] != "done" {
			t.Errorf("records after lost %v", got)
		}
		// The undisputed 5.00 may be refunded? No: a disputed payment is not refunded at all.
		wantError(t, p.post("/v1/payment_gateways/refund", m, map[string]any{"payment_id": bID, "amount": "5.00"}), 409, "INVALID_STATE", "")

		// A card payment without a dispute is refunded, in parts, up to what was paid.
		c := p.paidGateway(t, m, "D-3", "8.00", "4242424242424242", hooks.url)
		want(t, p.post("/v1/payment_gateways/refund", m, map[string]any{"payment_id": c, "amount": "3.00"}), 200)
		r = p.post("/v1/payment_gateways/refund", m, map[string]any{"payment_id": c})
		want(t, r, 200)
		if rest := r.JSON(t); str(rest, "amount") != "5.00" || str(rest, "payment_type") != "gateway_payment" {
			t.Errorf("refund of the rest %s", r.Body)
		}
		wantError(t, p.post("/v1/payment_gateways/refund", m, map[string]any{"payment_id": c}), 409, "INVALID_STATE", "")
		wantError(t, p.post("/v1/payment_gateways/refund", other, map[string]any{"payment_id": c}), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/sandbox/disputes", m, map[string]any{"payment_type": "gateway_payment", "payment_id": c}), 409, "INVALID_STATE", "")
		if got := p.balanceOf(m, "AUD").Available.String(); got != "29.95" {
			t.Errorf("available after a refunded payment %s, want 29.95", got)
		}

		list := p.get("/v2/disputes?status=lost", m).JSON(t)
		if fmt.Sprint(list["total"]) != "1" {
			t.Errorf("lost disputes %v", list)
		}
		wantError(t, p.get("/v2/disputes?status=open", m), 422, "VALIDATION_FAILED", "status")
		p.drained(t, m)
		types := join(hooks.types())
		for _, wantType := range []string{"dispute.created", "dispute.updated", "dispute.closed"} {
			if !strings.Contains(types, wantType) {
				t.Errorf("webhooks %s lack %s", types, wantType)
			}
		}
		pinVerifyLedger(t, p)
	})
}

// TestDisputeNegativeBalance: a card link partly refunded, then disputed
// and lost, takes available below zero; while it is, a refund (a movement
// out) is 422 INSUFFICIENT_FUNDS, and money coming in brings it back up.
// The deadline loses an unanswered dispute (staged evidence is no answer)
// once, with the fee.
func TestDisputeNegativeBalance(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("NZD")["NZD"]
		link := p.paidLink(t, m, "10.00", "4242424242424242")
		r := p.post("/v3/payin_links/refund", m, map[string]any{"uuid": link, "amount": "4.00"})
		want(t, r, 200)
		if ref := r.JSON(t); str(ref, "amount") != "4.00" || str(ref, "status") != "done" || str(ref, "payment_id") != link {
			t.Errorf("refund %s", r.Body)
		}
		wantError(t, p.post("/v3/payin_links/refund", m, map[string]any{"uuid": link, "amount": "6.01"}), 422, "VALIDATION_FAILED", "amount")
		d := p.openDispute(t, m, map[string]any{"payment_type": "payin_link", "payment_id": link})
		if str(d, "amount") != "6.00" {
			t.Errorf("dispute of the unrefunded part: %v", d)
		}
		want(t, p.post("/v2/disputes/accept", m, map[string]any{"uuid": str(d, "uuid")}), 200)
		if got := p.balanceOf(m, "NZD").Available.String(); got != "-25.00" {
			t.Fatalf("available after the fee %s, want -25.00", got)
		}
		second := p.paidLink(t, m, "10.00", "4242424242424242")
		if got := p.balanceOf(m, "NZD").Available.String(); got != "-15.00" {
			t.Errorf("available after a payment %s, want -15.00", got)
		}
		wantError(t, p.post("/v3/payin_links/refund", m, map[string]any{"uuid": second, "amount": "1.00"}), 422, "INSUFFICIENT_FUNDS", "")

		late := p.openDispute(t, m, map[string]any{"payment_type": "payin_link", "payment_id": second})
		want(t, p.evidence(m, map[string]string{"uuid": str(late, "uuid"), "uncategorized_text": "staged only"}), 200)
		p.advance(m, int64((7*24*time.Hour-time.Minute)/time.Second))
		if got := str(p.get("/v2/disputes/detail?uuid="+str(late, "uuid"), m).JSON(t), "status"); got != "needs_response" {
			t.Errorf("a minute before due_by: %s", got)
		}
		p.advance(m, 60)
		lost := p.get("/v2/disputes/detail?uuid="+str(late, "uuid"), m).JSON(t)
		if str(lost, "status") != "lost" || str(lost, "fee") != "25.00" {
			t.Errorf("past due_by: %v", lost)
		}
		p.advance(m, 3600)
		if got := p.balanceOf(m, "NZD").Available.String(); got != "-50.00" {
			t.Errorf("available after the deadline %s, want -50.00 (one fee)", got)
		}
		pinVerifyLedger(t, p)
	})
}

// TestDisputeTestCard: the sandbox's test card 4000 0000 0000 0259 is
// disputed by itself a minute after paying (on the merchant's clock);
// a sandbox dispute without payment_id makes and pays its own link.
func TestDisputeTestCard(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD", "NZD")
		aud := m["AUD"]
		id := p.paidGateway(t, aud, "T-1", "12.00", "4000000000000259", "http://127.0.0.1:9/hooks")
		if l := p.get("/v2/disputes", aud).JSON(t); fmt.Sprint(l["total"]) != "0" {
			t.Errorf("disputed at once: %v", l)
		}
		p.advance(aud, 60)
		l := p.get("/v2/disputes?currency=AUD", aud).JSON(t)
		recs, _ := l["records"].([]any)
		if len(recs) != 1 || str(recs[0].(map[string]any), "payment_id") != id || str(recs[0].(map[string]any), "reason") != "fraudulent" {
			t.Fatalf("after a minute: %v", l)
		}
		own := p.openDispute(t, aud, map[string]any{})
		if str(own, "payment_type") != "payin_link" || str(own, "currency") != "NZD" || str(own, "status") != "needs_response" {
			t.Errorf("sandbox's own payment disputed: %v", own)
		}
		if l := p.get("/v2/disputes", aud).JSON(t); fmt.Sprint(l["total"]) != "2" {
			t.Errorf("every currency's disputes: %v", l)
		}
		pinVerifyLedger(t, p)
	})
}

// TestDisputeAnswerRace: accept and submit race on one dispute from 20
// goroutines: one wins, every other answer is 409, one dispute.closed or
// dispute.updated; on PostgreSQL across two payd processes too.
func TestDisputeAnswerRace(t *testing.T) {
	t.Parallel()
	race := func(t *testing.T, procs []*payd) {
		m := procs[0].merchant("AUD")["AUD"]
		id := procs[0].paidGateway(t, m, "R-1", "30.00", "4242424242424242", "http://127.0.0.1:9/hooks")
		d := procs[0].openDispute(t, m, map[string]any{"payment_type": "gateway_payment", "payment_id": id})
		var mu sync.Mutex
		won := map[string]int{}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := procs[i%len(procs)]
				var r response
				var err error
				if i%2 == 0 {
					r, err = p.send(req{method: "POST", path: "/v2/disputes/accept", as: &m, body: map[string]any{"uuid": str(d, "uuid")}})
				} else {
					body, ct := evidenceForm(t, map[string]string{"uuid": str(d, "uuid"), "submit": "true", "uncategorized_text": "proof"})
					r, err = p.send(req{method: "POST", path: "/v2/disputes/evidence", as: &m, body: body, header: map[string]string{"Content-Type": ct}})
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Errorf("request: %v", err)
				case r.Status == 200:
					won[fmt.Sprint(i%2)]++
				case r.Status != 409:
					t.Errorf("answer %d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if won["0"]+won["1"] != 1 {
			t.Errorf("winners %v, want exactly one", won)
		}
		var events int
		if err := procs[0].srv.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM events WHERE merchant_id = $1 AND event_type IN ('dispute.closed', 'dispute.updated')`,
			m.MerchantID).Scan(&events); err != nil || events != 1 {
			t.Errorf("%d answering events (%v), want 1", events, err)
		}
		pinVerifyLedger(t, procs[0])
	}
	t.Run("one process", func(t *testing.T) {
		each(t, func(t *testing.T, p *payd) { race(t, []*payd{p}) })
	})
	t.Run("two processes", func(t *testing.T) {
		eachShared(t, func(t *testing.T, a, b *payd) { race(t, []*payd{a, b}) })
	})
}

// TestDisputeDeadlineRestart: the deadline is a job in the database: a
// dispute opened before a restart is lost at due_by after it, once.
func TestDisputeDeadlineRestart(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		first, stop := startStoppable(t, dsn)
		m := first.merchant("AUD")["AUD"]
		id := first.paidGateway(t, m, "X-1", "40.00", "4242424242424242", "http://127.0.0.1:9/hooks")
		d := first.openDispute(t, m, map[string]any{"payment_type": "gateway_payment", "payment_id": id})
		stop()
		second, _ := startStoppable(t, dsn)
		second.advance(m, int64(ResponseWindowSeconds))
		got := second.get("/v2/disputes/detail?uuid="+str(d, "uuid"), m).JSON(t)
		if str(got, "status") != "lost" || str(got, "fee") != "25.00" {
			t.Errorf("after the restart, past due_by: %v", got)
		}
		second.advance(m, 3600)
		if b := second.balanceOf(m, "AUD").Available.String(); b != "-25.00" {
			t.Errorf("available %s, want -25.00 (40.00 paid, disputed, one fee)", b)
		}
		pinVerifyLedger(t, second)
	})
}

// ResponseWindowSeconds is dispute.ResponseWindow in seconds.
const ResponseWindowSeconds = 7 * 24 * 3600

// startStoppable is start whose payd the test stops when it says (a
// restart), or at its end.
func startStoppable(t *testing.T, dsn string) (*payd, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	root := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, server.Config{DB: dsn, Env: httpapi.Sandbox, PublicURL: root, StoreOptions: store.Options{SQLiteSynchronous: "NORMAL"}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && err != http.ErrServerClosed {
				t.Errorf("serve: %v", err)
			}
			srv.Close()
		})
	}
	t.Cleanup(stop)
	return &payd{t: t, srv: srv, base: root + "/api", root: root}, stop
}

// TestDisputeOverdrawnRefusals: while a lost dispute's fee keeps available
// below zero, a payout, an external transfer and an on-demand settlement
// are 422 INSUFFICIENT_FUNDS and change nothing, and an end-of-day
// settlement makes no record that day (CONTRACT §25); once money covers
// it, a payout goes through again.
func TestDisputeOverdrawnRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		tre, err := p.srv.Merchants.OpenTreasury(context.Background(), m.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		id := p.paidGateway(t, m, "O-1", "10.00", "4242424242424242", "http://127.0.0.1:9/hooks")
		in := p.post("/v2/transfers", m, map[string]any{"amount": "4", "description": "to treasury", "treasury_account_id": tre.PublicID})
		want(t, in, 201)
		want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(in.JSON(t), "uuid"), "status": "completed"}), 200)
		if b := p.treasuryBalance(t, m, tre.PublicID); minorUnits(t, b.Available, "AUD") != 400 {
			t.Fatalf("treasury after the transfer in: %+v", b)
		}
		d := p.openDispute(t, m, map[string]any{"payment_type": "gateway_payment", "payment_id": id})
		want(t, p.post("/v2/disputes/accept", m, map[string]any{"uuid": str(d, "uuid")}), 200)
		// 10.00 paid - 4.00 to treasury - 10.00 disputed - 25.00 fee
		if got := p.balanceOf(m, "AUD").Available.String(); got != "-29.00" {
			t.Fatalf("available %s, want -29.00", got)
		}
		wantError(t, p.post("/v2/transfers", m, map[string]any{"amount": "1", "description": "to treasury", "treasury_account_id": tre.PublicID}), 422, "INSUFFICIENT_FUNDS", "")
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank}}), 200)
		wantError(t, p.post("/v2/payouts", m, payoutBody("AUD", "au_bank_aud", "1", bsbOK)), 422, "INSUFFICIENT_FUNDS", "")
		ext := p.post("/v2/transfers", m, map[string]any{"amount": "1", "description": "to my bank", "external_bank_account": audBank})
		wantError(t, ext, 422, "INSUFFICIENT_FUNDS", "")
		if !strings.Contains(string(ext.Body), "lost card dispute") {
			t.Errorf("the treasury's external transfer is refused for another reason: %s", ext.Body)
		}
		wantError(t, p.post("/v2/settlements", m, map[string]any{}), 422, "INSUFFICIENT_FUNDS", "")

		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "end_of_day", "external_bank_account": audBank}}), 200)
		p.advance(m, 24*3600)
		if n := len(p.settlements(m)); n != 0 {
			t.Errorf("%d end-of-day settlements while available is below zero, want none", n)
		}
		if got := p.balanceOf(m, "AUD").Available.String(); got != "-29.00" {
			t.Errorf("available after the refusals %s, want -29.00", got)
		}
		p.fund(m, "100")
		if got := p.balanceOf(m, "AUD").Available.String(); got != "71.00" {
			t.Fatalf("available after funding %s, want 71.00", got)
		}
		want(t, p.post("/v2/payouts", m, payoutBody("AUD", "au_bank_aud", "10", bsbOK)), 201)
		want(t, p.post("/v2/transfers", m, map[string]any{"amount": "1", "description": "to my bank", "external_bank_account": audBank}), 201)
		pinVerifyLedger(t, p)
	})
}

// TestDisputeDeadlineTwoProcesses: two payd processes on one PostgreSQL
// both run jobs; a dispute's deadline loses it once, with one fee and one
// dispute.closed, whichever process's worker takes the job.
func TestDisputeDeadlineTwoProcesses(t *testing.T) {
	t.Parallel()
	eachShared(t, func(t *testing.T, a, b *payd) {
		m := a.merchant("AUD")["AUD"]
		var uuids []string
		for i := range 5 {
			id := a.paidGateway(t, m, fmt.Sprintf("S-%d", i), "10.00", "4242424242424242", "http://127.0.0.1:9/hooks")
			uuids = append(uuids, str(a.openDispute(t, m, map[string]any{"payment_type": "gateway_payment", "payment_id": id}), "uuid"))
		}
		a.advance(m, ResponseWindowSeconds/2)
		b.advance(m, ResponseWindowSeconds/2)
		a.advance(m, 0)
		for _, u := range uuids {
			if got := str(b.get("/v2/disputes/detail?uuid="+u, m).JSON(t), "status"); got != "lost" {
				t.Errorf("dispute %s past due_by: %s", u, got)
			}
		}
		if got := b.balanceOf(m, "AUD").Available.String(); got != "-125.00" {
			t.Errorf("available %s, want -125.00 (five payments of 10.00 lost, five fees)", got)
		}
		var closed int
		if err := a.srv.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM events WHERE merchant_id = $1 AND event_type = 'dispute.closed'`,
			m.MerchantID).Scan(&closed); err != nil || closed != 5 {
			t.Errorf("%d dispute.closed events (%v), want 5", closed, err)
		}
		pinVerifyLedger(t, a)
	})
}

// TestDisputeNetworkNotices: the card network's notices, as a production
// acquirer sends them through gateway.ReceiveDisputeNotice, open a dispute
// of the charge they name and then decide it: lost takes the fee, won
// brings the amount back; a notice after the decision changes nothing; a
// notice of no payment or of no outcome payd knows is refused. A gateway
// payment paid by PayID, not by card, cannot be disputed (409).
func TestDisputeNetworkNotices(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		notice := func(n gateway.DisputeNotice) error {
			return p.srv.DB.Exec(t.Context(), func(tx *store.Tx) error { return p.srv.Gateway.ReceiveDisputeNotice(t.Context(), tx, n) })
		}
		disputeOf := func(payment string) map[string]any {
			t.Helper()
			recs, _ := p.get("/v2/disputes?currency=AUD", m).JSON(t)["records"].([]any)
			for _, r := range recs {
				if r := r.(map[string]any); str(r, "payment_id") == payment {
					return r
				}
			}
			t.Fatalf("no dispute of payment %s in %v", payment, recs)
			return nil
		}
		lost := p.paidGateway(t, m, "N-1", "30.00", "4242424242424242", "http://127.0.0.1:9/hooks")
		won := p.paidGateway(t, m, "N-2", "20.00", "4242424242424242", "http://127.0.0.1:9/hooks")
		for _, id := range []string{lost, won} {
			if err := notice(gateway.DisputeNotice{Charge: id + "-1", Reason: "fraudulent", ReasonCode: "10.4"}); err != nil {
				t.Fatalf("the notice opening a dispute of %s: %v", id, err)
			}
			if d := disputeOf(id); str(d, "status") != "needs_response" || str(d, "reason") != "fraudulent" {
				t.Errorf("opened by the network: %v", d)
			}
		}
		if got := p.balanceOf(m, "AUD").Available.String(); got != "0.00" {
			t.Errorf("available while both are disputed: %s", got)
		}
		if err := notice(gateway.DisputeNotice{Charge: lost + "-1", Outcome: "lost"}); err != nil {
			t.Fatal(err)
		}
		if err := notice(gateway.DisputeNotice{Charge: won + "-1", Outcome: "won"}); err != nil {
			t.Fatal(err)
		}
		if err := notice(gateway.DisputeNotice{Charge: lost + "-1", Outcome: "won"}); err != nil {
			t.Errorf("a notice after the decision: %v, want nothing done", err)
		}
		dl, dw := disputeOf(lost), disputeOf(won)
		if str(dl, "status") != "lost" || str(dl, "fee") != "25.00" || str(dw, "status") != "won" {
			t.Errorf("decided by the network: lost %v, won %v", dl, dw)
		}
		if got := p.recordsOf(t, m, "AUD", str(dl, "uuid")); got["dispute"] != "done" || got["dispute_fee"] != "done" {
			t.Errorf("records of the lost dispute %v", got)
		}
		if got := p.recordsOf(t, m, "AUD", str(dw, "uuid")); got["dispute"] != "failed" {
			t.Errorf("records of the won dispute %v", got)
		}
		if got := p.balanceOf(m, "AUD").Available.String(); got != "-5.00" {
			t.Errorf("available after one won and one lost with its fee: %s, want -5.00", got)
		}
		for _, n := range []gateway.DisputeNotice{{Charge: "nonsense"}, {Charge: "999999999-1"}, {Charge: won + "-1", Outcome: "maybe"}} {
			if err := notice(n); err == nil {
				t.Errorf("notice %+v was taken", n)
			}
		}

		r := p.gatewayCreate(p.bearerFor(m).Token, gatewayOrder("N-3", "100.00", "https://shop.example/thanks", "http://127.0.0.1:9/hooks"))
		want(t, r, 200)
		created := r.JSON(t)
		want(t, p.payInto(m, checkoutPayID(t, str(created, "redirect_url")), "100.00", "JANE PAYER"), 200)
		wantError(t, p.post("/v2/sandbox/disputes", m, map[string]any{"payment_type": "gateway_payment", "payment_id": fmt.Sprint(created["payment_id"])}),
			409, "INVALID_STATE", "")
		pinVerifyLedger(t, p)
	})
}
