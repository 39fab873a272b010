package bank

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"image"
	"image/draw"
	_ "image/jpeg" // decodes JPEG QR images
	_ "image/png"  // decodes PNG QR images
	"net/http"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"payd/internal/fault"
	"payd/internal/qr"
)

// MaxQRImageBytes bounds a QR image (spec "Limits": at most 2 MB).
const MaxQRImageBytes = 2 << 20

// maxQRImagePixels bounds a decoded image, so a small file that claims huge
// dimensions cannot exhaust memory.
const maxQRImagePixels = 40_000_000

// QRNotFound is the exact message of every unreadable or unknown QR image (CONTRACT §7).
const QRNotFound = "No bank account was found for this QR code"

// QRLookup is the result of a VietQR image lookup (spec "Bank lookup result (VND)").
type QRLookup struct {
	AccountName   string `json:"account_name" doc:"The account holder's name, from the name inquiry (the sandbox answers a deterministic name)." example:"NGUYEN VAN AN"`
	AccountNumber string `json:"account_number" example:"0123456789"`
	BankName      string `json:"bank_name" doc:"The bank's name in the NAPAS directory shipped with payd." example:"Ngân hàng TMCP Ngoại Thương Việt Nam"`
	SwiftCode     string `json:"swift_code" doc:"The bank's SWIFT/BIC code; empty for a member bank that has none." example:"BFTVVNVX"`
}

// NameInquiry tells the holder's name of an account at a NAPAS bank: the
// seam a real NAPAS name-inquiry connection plugs into.
type NameInquiry interface {
	AccountName(ctx context.Context, bin, account string) (string, error)
}

// SandboxNames answers a deterministic Vietnamese-style name per account.
type SandboxNames struct{}

var (
	familyNames = []string{"NGUYEN", "TRAN", "LE", "PHAM", "HOANG", "PHAN", "VU", "DANG", "BUI", "DO"}
	middleNames = []string{"VAN", "THI", "DUC", "MINH", "NGOC", "HUU"}
	givenNames  = []string{"AN", "BINH", "CHI", "DUNG", "HA", "HAI", "LAN", "LINH", "MAI", "NAM", "PHUONG", "QUANG", "SON", "THAO", "TUAN", "VY"}
)

// AccountName is a name chosen by a hash of the BIN and account.
func (SandboxNames) AccountName(_ context.Context, bin, account string) (string, error) {
	h := sha256.Sum256([]byte(bin + "/" + account))
	n := binary.BigEndian.Uint64(h[:8])
	return familyNames[n%uint64(len(familyNames))] + " " + middleNames[(n/10)%uint64(len(middleNames))] + " " + givenNames[(n/100)%uint64(len(givenNames))], nil
}

// NoNames is the name inquiry of a payd with no NAPAS connection: it knows
// no names, so account_name is empty.
type NoNames struct{}

// AccountName answers "".
func (NoNames) AccountName(context.Context, string, string) (string, error) { return "", nil }

func qrNotFound() error { return fault.NotFoundf("%s", QRNotFound) }

// LookupQRImage reads a VietQR code from a PNG or JPEG image (told by its
// content, never its name) and resolves its bank through the NAPAS
// directory. Anything but PNG or JPEG (base64 text included) is a 415; an
// image without a readable VietQR code, with a bad CRC or an unknown BIN is
// the 404 of CONTRACT §7.
func (d *Directory) LookupQRImage(ctx context.Context, data []byte, names NameInquiry) (QRLookup, error) {
	if len(data) > MaxQRImageBytes {
		return QRLookup{}, fault.New(fault.TooLarge, fault.CodeTooLarge, "the QR image is larger than %d bytes", MaxQRImageBytes)
	}
	switch http.DetectContentType(data) {
	case "image/png", "image/jpeg":
	default:
		return QRLookup{}, fault.New(fault.UnsupportedMedia, fault.CodeUnsupportedMedia,
			"qr_image must be a PNG or JPEG image (told by its content; base64 text is not accepted)")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxQRImagePixels {
		return QRLookup{}, qrNotFound()
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return QRLookup{}, qrNotFound()
	}
	text, ok := readQR(img)
	if !ok {
		return QRLookup{}, qrNotFound()
	}
	v, err := qr.ParseVietQR(text)
	if err != nil {
		return QRLookup{}, qrNotFound()
	}
	b, ok := d.NAPAS(v.BIN)
	if !ok {
		return QRLookup{}, qrNotFound()
	}
	name, err := names.AccountName(ctx, v.BIN, v.Account)
	if err != nil {
		return QRLookup{}, err
	}
	return QRLookup{AccountName: name, AccountNumber: v.Account, BankName: b.Name, SwiftCode: b.SwiftCode}, nil
}

// readQR decodes the QR code in img, trying harder (rotations, low
// contrast, then smaller copies) when the plain pass finds none.
func readQR(img image.Image) (text string, ok bool) {
	defer func() {
		if recover() != nil { // a reader bug on a hostile image is a miss, never a crash
			text, ok = "", false
		}
	}()
	if text, ok := readQRPasses(img); ok {
		return text, true
	}
	// A code drawn with modules a fractional number of pixels wide (a
	// generated image scaled to a round size) defeats the reader's sampling
	// now and then: it missed about 2 % of 3,000 KHQRs drawn at 320 px,
	// which zbar read. Copies shrunk to the nearest pixels read all but 3.
	gray := grayOf(img)
	for _, f := range [][2]int{{3, 4}, {2, 3}, {1, 2}} {
		if text, ok := readQRPasses(shrink(gray, f[0], f[1])); ok {
			return text, true
		}
	}
	return "", false
}

// readQRPasses is one image's passes of readQR: two binarizers, each
// plain and trying harder.
func readQRPasses(img image.Image) (string, bool) {
	src := gozxing.NewLuminanceSourceFromImage(img)
	reader := qrcode.NewQRCodeReader()
	// The hybrid binarizer reads most photos; the global histogram one
	// reads low-contrast images whose dark modules are mid grey.
	for _, binarizer := range []gozxing.Binarizer{gozxing.NewHybridBinarizer(src), gozxing.NewGlobalHistgramBinarizer(src)} {
		bmp, err := gozxing.NewBinaryBitmap(binarizer)
		if err != nil {
			continue
		}
		for _, hints := range []map[gozxing.DecodeHintType]any{nil, {gozxing.DecodeHintType_TRY_HARDER: true}} {
			if res, err := reader.Decode(bmp, hints); err == nil {
				return res.GetText(), true
			}
		}
	}
	return "", false
}

// grayOf is img in grey.
func grayOf(img image.Image) *image.Gray {
	if g, ok := img.(*image.Gray); ok {
		return g
	}
	b := img.Bounds()
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(g, g.Rect, img, b.Min, draw.Src)
	return g
}

// shrink is g scaled by num/den (below 1), each pixel the nearest of g's.
func shrink(g *image.Gray, num, den int) *image.Gray {
	w, h := g.Rect.Dx()*num/den, g.Rect.Dy()*num/den
	out := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		row := g.Pix[g.PixOffset(g.Rect.Min.X, g.Rect.Min.Y+y*den/num):]
		for x := range w {
			out.Pix[y*out.Stride+x] = row[x*den/num]
		}
	}
	return out
}
