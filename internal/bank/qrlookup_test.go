package bank

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	qrcode "github.com/skip2/go-qrcode"

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

// TestReadQRFractionalModules: two KHQRs drawn at 320 px by go-qrcode, whose
// modules are 5.6 px wide, which gozxing misreads as they are, read through
// readQR's shrunk copies.
func TestReadQRFractionalModules(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"00020101021230540018payd_4rl030rh@payd0112PAYD4RL030RH0212payd sandbox520459995303840540512.505802KH5913Test Merchant6010Phnom Penh62120108W43U65H5993400131700000459302011318000004593026304D849",
		"00020101021230540018payd_oly19tus@payd0112PAYDOLY19TUS0212payd sandbox520459995303840540512.505802KH5913Test Merchant6010Phnom Penh621201084XZBV86I993400131700001100741011318000011007416304B14C",
	} {
		raw, err := qrcode.Encode(text, qrcode.Medium, 320)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := readQR(img); !ok || got != text {
			t.Errorf("readQR = %q, %v; want %q", got, ok, text)
		}
	}
}
