package e2e

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var (
	jpyOK = map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "1234567",
		"account_name": "ﾔﾏﾀﾞ ﾀﾛｳ", "account_type": "ordinary"}
	vndOK = map[string]any{"bank_code": "970436", "account_number": "0123456789", "account_name": "NGUYEN VAN A"}
)

// TestBankPayoutFlows: a JPY payout to a real Zengin bank and branch and a
// VND payout to a real NAPAS bank go from processing to completed, and the
// methods' banks lists come from the shipped directories.
func TestBankPayoutFlows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		currency, method, fund, amount string
		params                         map[string]any
		listed                         string
	}{
		{"JPY", "jp_bank_jpy", "100000", "10000", jpyOK, "0001"},
		{"VND", "vn_bank_vnd", "10000000", "500000", vndOK, "970436"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			t.Parallel()
			each(t, func(t *testing.T, p *payd) {
				m := p.merchant(tt.currency)[tt.currency]
				r := p.get("/v2/payouts/payout_method/params?payout_method_name="+tt.method, m)
				want(t, r, 200)
				var params struct {
					Record struct {
						Banks []struct{ Code, Name, ShortName string } `json:"banks"`
					} `json:"record"`
				}
				r.Decode(t, &params)
				if !slices.ContainsFunc(params.Record.Banks, func(b struct{ Code, Name, ShortName string }) bool { return b.Code == tt.listed && b.Name != "" }) {
					t.Fatalf("%s's banks (%d) do not list %s", tt.method, len(params.Record.Banks), tt.listed)
				}
				p.fund(m, tt.fund)
				created := p.createPayout(m, payoutBody(tt.currency, tt.method, tt.amount, tt.params))
				if created["status"] != "processing" {
					t.Fatalf("created = %v", created)
				}
				p.settlePayouts(m)
				got := p.payoutDetail(m, created["uuid"].(string))
				if got["status"] != "completed" || !slices.Equal(txStatuses(got), []string{"done"}) {
					t.Fatalf("after the network answered: %v", got)
				}
			})
		})
	}
}

// TestBankPayoutRefusesUnknownCodes: a bank or branch that is not in the
// directory is a 422 naming the field, and nothing is created.
func TestBankPayoutRefusesUnknownCodes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		ms := p.merchant("JPY", "VND", "IDR")
		const prefix = "payout_transaction_details[0].payout_method_params."
		for _, c := range []struct {
			name, currency, method string
			params                 map[string]any
			field, mention         string
		}{
			{"unknown Zengin bank", "JPY", "jp_bank_jpy", with(jpyOK, map[string]any{"bank_code": "0002"}), "bank_code", "not one of"},
			{"unknown Zengin branch", "JPY", "jp_bank_jpy", with(jpyOK, map[string]any{"branch_code": "999"}), "branch_code", "Zengin directory"},
			{"unknown NAPAS BIN", "VND", "vn_bank_vnd", with(vndOK, map[string]any{"bank_code": "999999"}), "bank_code", "not one of"},
			{"IDR code not a SWIFT code", "IDR", "id_bank_idr", map[string]any{"bank_code": "BMRI", "account_number": "1234567890", "account_name": "Budi"}, "bank_code", "SWIFT"},
		} {
			t.Run(c.name, func(t *testing.T) {
				m := ms[c.currency]
				r := p.post("/v2/payouts", m, payoutBody(c.currency, c.method, "100000", c.params))
				wantError(t, r, 422, "VALIDATION_FAILED", prefix+c.field)
				if msg, _ := r.Fields(t)[prefix+c.field].(string); !strings.Contains(msg, c.mention) {
					t.Errorf("%s: %q does not say %q", c.field, msg, c.mention)
				}
				list := p.get("/v2/payouts/all", m)
				want(t, list, 200)
				if total := list.JSON(t)["total"]; total.(interface{ String() string }).String() != "0" {
					t.Errorf("a refused payout was created: %s", list.Body)
				}
			})
		}
	})
}

// TestBankBranches: GET /v2/banks/branches answers from the Zengin
// directory: one branch, a bank's branches as a page list, 404 naming an
// unknown bank or branch, 422 for codes of the wrong shape.
func TestBankBranches(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("JPY")["JPY"]
		r := p.get("/v2/banks/branches?bank_code=0001&branch_code=001", m)
		want(t, r, 200)
		wantMembers(t, r.JSON(t), map[string]any{"bank_code": "0001", "bank_name": "みずほ", "bank_name_kana": "ﾐｽﾞﾎ",
			"branch_code": "001", "branch_name": "東京営業部", "branch_name_kana": "ﾄｳｷﾖｳ"})

		r = p.get("/v2/banks/branches?bank_code=0009&per_page=5&page=1", m)
		want(t, r, 200)
		var page struct {
			PerPage int `json:"per_page"`
			Total   int `json:"total"`
			Records []struct {
				BankCode   string `json:"bank_code"`
				BranchCode string `json:"branch_code"`
				BranchName string `json:"branch_name"`
			}
		}
		r.Decode(t, &page)
		if page.PerPage != 5 || len(page.Records) != 5 || page.Total < 100 || page.Records[0].BankCode != "0009" || page.Records[0].BranchCode != "001" || page.Records[0].BranchName != "神保町" {
			t.Errorf("branches of 0009: %s", r.Body)
		}

		r = p.get("/v2/banks/branches?bank_code=0002", m)
		wantError(t, r, 404, "NOT_FOUND", "")
		if !strings.Contains(string(r.Body), "0002") {
			t.Errorf("404 does not name the bank: %s", r.Body)
		}
		r = p.get("/v2/banks/branches?bank_code=0001&branch_code=999", m)
		wantError(t, r, 404, "NOT_FOUND", "")
		if !strings.Contains(string(r.Body), "999") {
			t.Errorf("404 does not name the branch: %s", r.Body)
		}
		wantError(t, p.get("/v2/banks/branches?bank_code=001", m), 422, "VALIDATION_FAILED", "bank_code")
		wantError(t, p.get("/v2/banks/branches?bank_code=0001&branch_code=1", m), 422, "VALIDATION_FAILED", "branch_code")
		wantError(t, p.get("/v2/banks/branches?bank_code=0001&branch_code=", m), 422, "VALIDATION_FAILED", "branch_code")
		wantError(t, p.get("/v2/banks/branches", m), 422, "VALIDATION_FAILED", "bank_code")
	})
}

// postQRImage sends data as the part qr_image, named name.
func (p *payd) postQRImage(as creds, name string, data []byte) response {
	p.t.Helper()
	body, ct := kycForm(p.t, nil, map[string]kycFile{"qr_image": {filename: name, data: data}})
	return p.do(req{method: "POST", path: "/v2/banks/lookup/qr_image", as: &as, body: body, header: map[string]string{"Content-Type": ct}})
}

func qrTestImage(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "bank", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBankQRImageLookup: VietQR images (made by an independent encoder, see
// internal/bank/testdata/gen.go) resolve to the account and its NAPAS bank;
// the refusals have the statuses and the exact message of CONTRACT §7.
func TestBankQRImageLookup(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("VND")["VND"]
		for name, want := range map[string][3]string{
			"vietqr.png":             {"0011001932418", "Ngân hàng TMCP Ngoại Thương Việt Nam", "BFTVVNVX"},
			"vietqr.jpg":             {"0123456789", "Ngân hàng TMCP Quân đội", "MSCBVNVX"},
			"vietqr-rotated.png":     {"0011001932418", "Ngân hàng TMCP Ngoại Thương Việt Nam", "BFTVVNVX"},
			"vietqr-tilted.png":      {"0011001932418", "Ngân hàng TMCP Ngoại Thương Việt Nam", "BFTVVNVX"},
			"vietqr-lowcontrast.jpg": {"0011001932418", "Ngân hàng TMCP Ngoại Thương Việt Nam", "BFTVVNVX"},
		} {
			r := p.postQRImage(m, "code.bin", qrTestImage(t, name))
			want200(t, r, name)
			got := r.JSON(t)
			if got["account_number"] != want[0] || got["bank_name"] != want[1] || got["swift_code"] != want[2] || got["account_name"] == "" {
				t.Errorf("%s: %s", name, r.Body)
			}
		}
		const notFound = `{"errors":{"code":"NOT_FOUND","message":"No bank account was found for this QR code"}}`
		for _, name := range []string{"not-qr.png", "not-vietqr.png", "bad-crc.png", "unknown-bin.png"} {
			r := p.postQRImage(m, name, qrTestImage(t, name))
			if r.Status != 404 || strings.TrimSpace(string(r.Body)) != notFound {
				t.Errorf("%s: %d %s, want 404 %s", name, r.Status, r.Body, notFound)
			}
		}
		png := qrTestImage(t, "vietqr.png")
		wantError(t, p.postQRImage(m, "code.png", []byte("I am text in a file named .png")), 415, "UNSUPPORTED_MEDIA_TYPE", "")
		wantError(t, p.postQRImage(m, "code.png", []byte(base64.StdEncoding.EncodeToString(png))), 415, "UNSUPPORTED_MEDIA_TYPE", "")
		// Bytes after a PNG's end are ignored by its readers: exactly 2 MiB is
		// read, one byte more is refused.
		limit := append(bytes.Clone(png), make([]byte, 2<<20-len(png))...)
		want200(t, p.postQRImage(m, "limit.png", limit), "a 2 MiB image")
		big := append(bytes.Clone(png), make([]byte, 2<<20+1-len(png))...)
		wantError(t, p.postQRImage(m, "big.png", big), 413, "TOO_LARGE", "")
		wantError(t, p.post("/v2/banks/lookup/qr_image", m, map[string]any{"qr_image": "x"}), 415, "UNSUPPORTED_MEDIA_TYPE", "")
		body, ct := kycForm(t, map[string]string{"note": "no image"}, nil)
		r := p.do(req{method: "POST", path: "/v2/banks/lookup/qr_image", as: &m, body: body, header: map[string]string{"Content-Type": ct}})
		wantError(t, r, 422, "VALIDATION_FAILED", "qr_image")
	})
}

func want200(t *testing.T, r response, what string) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: status %d, body %s", what, r.Status, r.Body)
	}
}
