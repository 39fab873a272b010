package bank

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"payd/internal/fault"
)

func testImage(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestQRLookupReadsVietQR: images of codes made by an independent VietQR
// encoder (testdata/gen.go), PNG and JPEG, rotated and low-contrast, resolve
// to the account and the NAPAS bank.
func TestQRLookupReadsVietQR(t *testing.T) {
	t.Parallel()
	d := dir(t)
	vcb := QRLookup{AccountNumber: "0011001932418", BankName: "Ngân hàng TMCP Ngoại Thương Việt Nam", SwiftCode: "BFTVVNVX"}
	mb := QRLookup{AccountNumber: "0123456789", BankName: "Ngân hàng TMCP Quân đội", SwiftCode: "MSCBVNVX"}
	for name, want := range map[string]QRLookup{
		"vietqr.png": vcb, "vietqr.jpg": mb, "vietqr-rotated.png": vcb, "vietqr-tilted.png": vcb, "vietqr-lowcontrast.jpg": vcb,
	} {
		got, err := d.LookupQRImage(context.Background(), testImage(t, name), SandboxNames{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.AccountName == "" {
			t.Errorf("%s: no account name", name)
		}
		again, _ := d.LookupQRImage(context.Background(), testImage(t, name), SandboxNames{})
		if again.AccountName != got.AccountName {
			t.Errorf("%s: the sandbox name is not deterministic: %q then %q", name, got.AccountName, again.AccountName)
		}
		got.AccountName = ""
		if got != want {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
}

func TestQRLookupRefusals(t *testing.T) {
	t.Parallel()
	d := dir(t)
	png := testImage(t, "vietqr.png")
	for name, c := range map[string]struct {
		data []byte
		kind fault.Kind
	}{
		"not a QR image":  {testImage(t, "not-qr.png"), fault.NotFound},
		"not a VietQR":    {testImage(t, "not-vietqr.png"), fault.NotFound},
		"bad CRC":         {testImage(t, "bad-crc.png"), fault.NotFound},
		"unknown BIN":     {testImage(t, "unknown-bin.png"), fault.NotFound},
		"truncated PNG":   {png[:len(png)/2], fault.NotFound},
		"base64 text":     {[]byte(base64.StdEncoding.EncodeToString(png)), fault.UnsupportedMedia},
		"text named .png": {[]byte("hello, I am not an image"), fault.UnsupportedMedia},
		"2 MB + 1 byte":   {append(bytes.Clone(png), make([]byte, MaxQRImageBytes+1-len(png))...), fault.TooLarge},
	} {
		_, err := d.LookupQRImage(context.Background(), c.data, SandboxNames{})
		e, ok := fault.As(err)
		if !ok || e.Kind != c.kind {
			t.Errorf("%s: %v, want kind %v", name, err, c.kind)
			continue
		}
		if c.kind == fault.NotFound && e.Message != QRNotFound {
			t.Errorf("%s: message %q, want %q", name, e.Message, QRNotFound)
		}
	}
}
