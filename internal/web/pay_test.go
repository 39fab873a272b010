package web

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	zxingqr "github.com/makiuchi-d/gozxing/qrcode"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/payin"
)

// fakePayins holds payins in memory; the token of a payin is "tok-" + uuid.
type fakePayins struct {
	mu     sync.Mutex
	payins map[string]payin.Payin
}

func newFakePayins(pis ...payin.Payin) *fakePayins {
	f := &fakePayins{payins: map[string]payin.Payin{}}
	for _, pi := range pis {
		f.payins[pi.UUID] = pi
	}
	return f
}

func fakePayToken(uuid string) string { return "tok-" + uuid }

func (f *fakePayins) Hosted(_ context.Context, uuid, token string) (payin.Payin, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pi, ok := f.payins[uuid]
	if !ok || token != fakePayToken(uuid) {
		return payin.Payin{}, fault.NotFoundf("payin %s not found", uuid)
	}
	return pi, nil
}

func (f *fakePayins) HostedPayee(ctx context.Context, uuid, token string) (payin.Payee, error) {
	if _, err := f.Hosted(ctx, uuid, token); err != nil {
		return payin.Payee{}, err
	}
	return payin.Payee{Name: "Example Shop", Zone: time.UTC}, nil
}

var fakeStatusText = map[payin.Status]string{payin.Received: "Payment received", payin.Failed: "Payment failed"}

func (f *fakePayins) PayHosted(ctx context.Context, uuid, token, outcome string) (payin.Payin, error) {
	pi, err := f.Hosted(ctx, uuid, token)
	if err != nil {
		return pi, err
	}
	to, ok := outcomeStatus[outcome]
	if !ok {
		return payin.Payin{}, fault.Field("outcome", "must be completed or failed")
	}
	if pi.Status != payin.Pending {
		return payin.Payin{}, fault.State("payin %s is %s", uuid, pi.Status)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	pi.Status, pi.StatusText = to, fakeStatusText[to]
	f.payins[uuid] = pi
	return pi, nil
}

func (f *fakePayins) status(uuid string) payin.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.payins[uuid].Status
}

const (
	merchantThanks = "https://shop.example/thanks?order=42"
	merchantSorry  = "https://sorry.example:8443/retry?order=42"
	qrPayload      = "00020101021226610014COM.EXAMPLE.WWW0118936009990000001234021500000000000012303UMI51440014ID.CO.QRIS.WWW0215ID10200000000010303UMI520454995303360540810000.005802ID5913PAYD SANDBOX6007JAKARTA6304ABCD"
)

// gcash is a pending redirect payin; with callbacks it names both return pages.
func gcash(uuid string, callbacks bool) payin.Payin {
	params := map[string]any{}
	if callbacks {
		params = map[string]any{"callback_url": merchantThanks, "failure_callback_url": merchantSorry}
	}
	php, _ := money.Lookup("PHP")
	return payin.Payin{
		UUID: uuid, Status: payin.Pending, StatusText: "Waiting for the customer's payment",
		PayCode: map[string]any{"pay_url": "/pay/" + uuid + "?t=" + fakePayToken(uuid)}, Currency: "PHP",
		Amount: money.StringOf(12550, php), Total: money.StringOf(12550, php), PaymentMethod: "ph_ewallet_gcash_php",
		PayinMethodParams: params, Description: "Order #42", ExpiredAt: clock.Time{T: time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)},
	}
}

// qris is a pending QR payin.
func qris(uuid string) payin.Payin {
	idr, _ := money.Lookup("IDR")
	return payin.Payin{
		UUID: uuid, Status: payin.Pending, StatusText: "Waiting for the customer's payment",
		PayCode: map[string]any{"qr_string": qrPayload}, Currency: "IDR",
		Amount: money.StringOf(10000000, idr), Total: money.StringOf(10000000, idr), PaymentMethod: "id_bank_qris_idr",
		PayinMethodParams: map[string]any{}, ExpiredAt: clock.Time{T: time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)},
	}
}

func settledAs(pi payin.Payin, status payin.Status) payin.Payin {
	pi.Status, pi.StatusText = status, fakeStatusText[status]
	return pi
}

// servePay sends one request to a pay page in the sandbox over payins.
func servePay(payins *fakePayins, sandbox bool, method, target string, form url.Values) *http.Response {
	mux := http.NewServeMux()
	newPayPage(payins, slog.New(slog.DiscardHandler), sandbox).mount(mux)
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w.Result()
}

func readPayBody(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

func payForm(outcome, token string) url.Values {
	return url.Values{"outcome": {outcome}, "t": {token}}
}

// wantPayHeaders fails unless res carries the headers of every pay page.
func wantPayHeaders(t *testing.T, res *http.Response) {
	t.Helper()
	for name, want := range map[string]string{
		"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
	} {
		if got := res.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'self'", "img-src 'self' data:", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, directive) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, directive)
		}
	}
}

// TestPayPage: what each request to /pay/{uuid} answers, with the headers
// every answer carries.
func TestPayPage(t *testing.T) {
	t.Parallel()
	const id = "11111111-2222-3333-4444-555555555555"
	tok := fakePayToken(id)
	page := "/pay/" + id + "?t=" + tok
	tests := []struct {
		name       string
		payins     *fakePayins
		method     string
		target     string
		form       url.Values
		wantStatus int
		// wantLocation is the redirect target ("" for none).
		wantLocation string
		wantBody     []string
		// wantFinal is the payin's status after the request.
		wantFinal payin.Status
	}{
		{name: "shows the pending payin", payins: newFakePayins(gcash(id, true)), method: "GET", target: page,
			wantStatus: 200, wantBody: []string{"Order #42", ">125.50<", ">PHP<", "GCash e-wallet", "Waiting for the customer&#39;s payment",
				"2 Jan 2030 03:04 UTC", `id="pay"`, `id="fail"`, `name="t" value="` + tok + `"`, `<strong id="payee">Example Shop</strong>`,
				"Pay 125.50 PHP to Example Shop by GCash e-wallet before 2 Jan 2030 03:04 UTC"}, wantFinal: payin.Pending},
		{name: "HEAD", payins: newFakePayins(gcash(id, true)), method: "HEAD", target: page, wantStatus: 200, wantFinal: payin.Pending},
		{name: "wrong token", payins: newFakePayins(gcash(id, true)), method: "GET", target: "/pay/" + id + "?t=tok-other",
			wantStatus: 404, wantBody: []string{"Payment not found"}, wantFinal: payin.Pending},
		{name: "no token", payins: newFakePayins(gcash(id, true)), method: "GET", target: "/pay/" + id,
			wantStatus: 404, wantBody: []string{"Payment not found"}, wantFinal: payin.Pending},
		{name: "unknown uuid", payins: newFakePayins(), method: "GET", target: page, wantStatus: 404, wantBody: []string{"Payment not found"}},
		{name: "no uuid", payins: newFakePayins(), method: "GET", target: "/pay/", wantStatus: 404, wantBody: []string{"Payment not found"}},
		{name: "deeper path", payins: newFakePayins(gcash(id, true)), method: "GET", target: "/pay/" + id + "/x?t=" + tok,
			wantStatus: 404, wantBody: []string{"Payment not found"}, wantFinal: payin.Pending},
		{name: "PUT", payins: newFakePayins(gcash(id, true)), method: "PUT", target: page, form: payForm("completed", tok),
			wantStatus: 405, wantBody: []string{"Method not allowed"}, wantFinal: payin.Pending},
		{name: "DELETE", payins: newFakePayins(gcash(id, true)), method: "DELETE", target: page,
			wantStatus: 405, wantBody: []string{"Method not allowed"}, wantFinal: payin.Pending},
		{name: "pay returns to callback_url", payins: newFakePayins(gcash(id, true)), method: "POST", target: page,
			form: payForm("completed", tok), wantStatus: 303, wantLocation: merchantThanks, wantFinal: payin.Received},
		{name: "fail returns to failure_callback_url", payins: newFakePayins(gcash(id, true)), method: "POST", target: page,
			form: payForm("failed", tok), wantStatus: 303, wantLocation: merchantSorry, wantFinal: payin.Failed},
		{name: "pay without callback stays", payins: newFakePayins(gcash(id, false)), method: "POST", target: page,
			form: payForm("completed", tok), wantStatus: 200, wantBody: []string{"Payment received"}, wantFinal: payin.Received},
		{name: "fail without callback stays", payins: newFakePayins(gcash(id, false)), method: "POST", target: page,
			form: payForm("failed", tok), wantStatus: 200, wantBody: []string{"Payment failed"}, wantFinal: payin.Failed},
		{name: "second pay press returns again", payins: newFakePayins(settledAs(gcash(id, true), payin.Received)), method: "POST", target: page,
			form: payForm("completed", tok), wantStatus: 303, wantLocation: merchantThanks, wantFinal: payin.Received},
		{name: "fail after pay shows the final status", payins: newFakePayins(settledAs(gcash(id, true), payin.Received)), method: "POST",
			target: page, form: payForm("failed", tok), wantStatus: 409, wantBody: []string{"Payment received"}, wantFinal: payin.Received},
		{name: "settled page has no buttons", payins: newFakePayins(settledAs(gcash(id, true), payin.Failed)), method: "GET", target: page,
			wantStatus: 200, wantBody: []string{"Payment failed"}, wantFinal: payin.Failed},
		{name: "form without the token", payins: newFakePayins(gcash(id, true)), method: "POST", target: page,
			form: url.Values{"outcome": {"completed"}}, wantStatus: 403, wantBody: []string{"Form out of date"}, wantFinal: payin.Pending},
		{name: "form with another token", payins: newFakePayins(gcash(id, true)), method: "POST", target: page,
			form: payForm("completed", "tok-other"), wantStatus: 403, wantFinal: payin.Pending},
		{name: "POST with a wrong link token", payins: newFakePayins(gcash(id, true)), method: "POST", target: "/pay/" + id + "?t=tok-other",
			form: payForm("completed", "tok-other"), wantStatus: 404, wantFinal: payin.Pending},
		{name: "unknown outcome", payins: newFakePayins(gcash(id, true)), method: "POST", target: page,
			form: payForm("refunded", tok), wantStatus: 422, wantFinal: payin.Pending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := servePay(tt.payins, true, tt.method, tt.target, tt.form)
			body := readPayBody(t, res)
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", res.StatusCode, tt.wantStatus, body)
			}
			wantPayHeaders(t, res)
			if got := res.Header.Get("Location"); got != tt.wantLocation {
				t.Errorf("Location = %q, want %q", got, tt.wantLocation)
			}
			for _, want := range tt.wantBody {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
			if got := tt.payins.status(id); got != tt.wantFinal {
				t.Errorf("payin status = %q, want %q", got, tt.wantFinal)
			}
		})
	}
}

// TestPayPageButtonsOnlyWhilePending: the form shows on a pending payin and
// nowhere else.
func TestPayPageButtonsOnlyWhilePending(t *testing.T) {
	t.Parallel()
	const id = "b"
	tests := []struct {
		name string
		pi   payin.Payin
		want bool
	}{
		{"pending", gcash(id, true), true},
		{"received", settledAs(gcash(id, true), payin.Received), false},
		{"failed", settledAs(gcash(id, true), payin.Failed), false},
		{"expired", settledAs(gcash(id, true), payin.Expired), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := readPayBody(t, servePay(newFakePayins(tt.pi), true, "GET", "/pay/"+id+"?t="+fakePayToken(id), nil))
			if got := strings.Contains(body, "<form"); got != tt.want {
				t.Errorf("form shown = %v, want %v:\n%s", got, tt.want, body)
			}
		})
	}
}

// TestPayPageProduction: without the sandbox there are no buttons, and their
// POST is not allowed.
func TestPayPageProduction(t *testing.T) {
	t.Parallel()
	const id = "p"
	page := "/pay/" + id + "?t=" + fakePayToken(id)
	payins := newFakePayins(gcash(id, true))
	body := readPayBody(t, servePay(payins, false, "GET", page, nil))
	if strings.Contains(body, "<form") || !strings.Contains(body, "Order #42") {
		t.Errorf("production page:\n%s", body)
	}
	res := servePay(payins, false, "POST", page, payForm("completed", fakePayToken(id)))
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST = %d (Allow %q), want 405 (Allow GET, HEAD)", res.StatusCode, res.Header.Get("Allow"))
	}
	if got := payins.status(id); got != payin.Pending {
		t.Errorf("status = %q after a production POST, want pending", got)
	}
}

// TestPayPageFormActionNamesReturnPages: Chromium checks form-action on the
// redirect after the form, so the merchant's return origins are allowed, and
// nothing but an http(s) origin gets into the header.
func TestPayPageFormActionNamesReturnPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"both", map[string]any{"callback_url": merchantThanks, "failure_callback_url": merchantSorry},
			"form-action 'self' https://shop.example https://sorry.example:8443;"},
		{"none", map[string]any{}, "form-action 'self';"},
		{"not http", map[string]any{"callback_url": "javascript:alert(1)"}, "form-action 'self';"},
		{"header injection", map[string]any{"callback_url": "https://a.example; script-src *"}, "form-action 'self';"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pi := gcash("f", false)
			pi.PayinMethodParams = tt.params
			res := servePay(newFakePayins(pi), true, "GET", "/pay/f?t="+fakePayToken("f"), nil)
			if got := res.Header.Get("Content-Security-Policy"); !strings.Contains(got, tt.want) {
				t.Errorf("Content-Security-Policy = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestPayPageRedirectsOnlyToHTTP: a settled payin whose return page is not an
// http(s) URL keeps the customer here.
func TestPayPageRedirectsOnlyToHTTP(t *testing.T) {
	t.Parallel()
	pi := gcash("j", false)
	pi.PayinMethodParams = map[string]any{"callback_url": "javascript:alert(1)"}
	res := servePay(newFakePayins(pi), true, "POST", "/pay/j?t="+fakePayToken("j"), payForm("completed", fakePayToken("j")))
	if res.StatusCode != 200 || res.Header.Get("Location") != "" {
		t.Errorf("status %d, Location %q; want 200 and no redirect", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestPayPageEscapes: the merchant's description is text, never markup.
func TestPayPageEscapes(t *testing.T) {
	t.Parallel()
	pi := gcash("e", true)
	pi.Description = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	body := readPayBody(t, servePay(newFakePayins(pi), true, "GET", "/pay/e?t="+fakePayToken("e"), nil))
	if strings.Contains(body, "<script") || strings.Contains(body, "<img src=x") {
		t.Errorf("description not escaped:\n%s", body)
	}
	if !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("escaped description missing:\n%s", body)
	}
}

// TestPayPageQR: a QR payin's page shows the image and the payload to copy.
func TestPayPageQR(t *testing.T) {
	t.Parallel()
	const id = "q"
	body := readPayBody(t, servePay(newFakePayins(qris(id)), true, "GET", "/pay/"+id+"?t="+fakePayToken(id), nil))
	for _, want := range []string{`<img id="qr" src="/pay/q/qr.png?t=tok-q"`, `<code id="qr-string">` + qrPayload + `</code>`, ">100000.00<", ">IDR<", "QRIS",
		"Scan the QR code below with your banking or e-wallet app and pay 100000.00 IDR to Example Shop before"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
}

// TestPayQRImage: /pay/{uuid}/qr.png is a PNG of a pending QR payin and 404
// for everything else.
func TestPayQRImage(t *testing.T) {
	t.Parallel()
	const id = "q"
	image := "/pay/" + id + "/qr.png?t=" + fakePayToken(id)
	tests := []struct {
		name       string
		pi         payin.Payin
		method     string
		target     string
		wantStatus int
		wantType   string
	}{
		{"pending QR payin", qris(id), "GET", image, 200, "image/png"},
		{"wrong token", qris(id), "GET", "/pay/" + id + "/qr.png?t=tok-x", 404, "text/html; charset=utf-8"},
		{"no QR", gcash(id, true), "GET", image, 404, "text/html; charset=utf-8"},
		{"received", settledAs(qris(id), payin.Received), "GET", image, 404, "text/html; charset=utf-8"},
		{"POST", qris(id), "POST", image, 405, "text/html; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := servePay(newFakePayins(tt.pi), true, tt.method, tt.target, nil)
			if res.StatusCode != tt.wantStatus || res.Header.Get("Content-Type") != tt.wantType {
				t.Fatalf("answer = %d %q, want %d %q", res.StatusCode, res.Header.Get("Content-Type"), tt.wantStatus, tt.wantType)
			}
			wantPayHeaders(t, res)
		})
	}
}

// TestPayQRImageDecodes: the QR image is a real PNG, square, and large
// enough to scan from a screen.
func TestPayQRImageDecodes(t *testing.T) {
	t.Parallel()
	const id = "q"
	res := servePay(newFakePayins(qris(id)), true, "GET", "/pay/"+id+"/qr.png?t="+fakePayToken(id), nil)
	raw := readPayBody(t, res)
	img, err := png.Decode(bytes.NewReader([]byte(raw)))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != b.Dy() || b.Dx() < qrSizePixels/2 || b.Dx() > qrSizePixels {
		t.Errorf("QR image is %dx%d, want a square of %d to %d pixels", b.Dx(), b.Dy(), qrSizePixels/2, qrSizePixels)
	}
}

// TestQRImagesRead: writeQR's images read back to their text, among them two
// sandbox KHQRs that gozxing could not read when go-qrcode drew them at
// 320 px (modules of fractional width), though zbar could.
func TestQRImagesRead(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"00020101021230540018payd_4rl030rh@payd0112PAYD4RL030RH0212payd sandbox520459995303840540512.505802KH5913Test Merchant6010Phnom Penh62120108W43U65H5993400131700000459302011318000004593026304D849",
		"00020101021230540018payd_oly19tus@payd0112PAYDOLY19TUS0212payd sandbox520459995303840540512.505802KH5913Test Merchant6010Phnom Penh621201084XZBV86I993400131700001100741011318000011007416304B14C",
		"merchant@example.com",
		strings.Repeat("0123456789ABCDEF", 100),
	} {
		w := httptest.NewRecorder()
		if err := writeQR(w, text); err != nil {
			t.Fatalf("writeQR(%.20q...): %v", text, err)
		}
		img, err := png.Decode(w.Body)
		if err != nil {
			t.Fatalf("decode PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() != b.Dy() || b.Dx() > qrSizePixels {
			t.Errorf("%.20q...: image is %dx%d, want a square of at most %d pixels", text, b.Dx(), b.Dy(), qrSizePixels)
		}
		bmp, err := gozxing.NewBinaryBitmapFromImage(img)
		if err != nil {
			t.Fatal(err)
		}
		res, err := zxingqr.NewQRCodeReader().Decode(bmp, nil)
		if err != nil {
			res, err = zxingqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
		}
		if err != nil {
			t.Errorf("%.20q...: read: %v", text, err)
		} else if res.GetText() != text {
			t.Errorf("read %q, want %q", res.GetText(), text)
		}
	}
}

// TestPayCSS: the stylesheet the pages link is served as CSS.
func TestPayCSS(t *testing.T) {
	t.Parallel()
	res := servePay(newFakePayins(), true, "GET", "/assets/pay.css", nil)
	body := readPayBody(t, res)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") || !strings.Contains(body, "main.pay") {
		t.Errorf("GET /assets/pay.css = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
}
