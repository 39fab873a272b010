//go:build ignore

// gen writes the QR images of the lookup tests; run it from this directory
// with `go run gen.go`. The VietQR payloads were made by an independent
// encoder, the npm package vietnam-qr-pay 1.5.1: payloads.mjs prints them
// (`npm install vietnam-qr-pay@1.5.1 && node payloads.mjs`), and the
// constants below are its output:
//
//	QRPay.initVietQR({bankBin:'970436', bankNumber:'0011001932418', amount:'50000', purpose:'payd test'}).build()
//	QRPay.initVietQR({bankBin:'970422', bankNumber:'0123456789'}).build()
//	QRPay.initVietQR({bankBin:'999999', bankNumber:'0123456789'}).build()
//
// and drawn as QR codes by github.com/skip2/go-qrcode (not the reader payd
// decodes with).
package main

import (
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"

	qrcode "github.com/skip2/go-qrcode"
)

const (
	vcb        = "00020101021238570010A00000072701270006970436011300110019324180208QRIBFTTA53037045405500005802VN62130809payd test6304CC6D"
	mb         = "00020101021138540010A00000072701240006970422011001234567890208QRIBFTTA53037045802VN6304B1A7"
	unknownBIN = "00020101021138540010A00000072701240006999999011001234567890208QRIBFTTA53037045802VN63044CC6"
)

func main() {
	writePNG("vietqr.png", code(vcb, 320))
	writeJPEG("vietqr.jpg", code(mb, 320), 80)
	writePNG("vietqr-rotated.png", rotate90(code(vcb, 320)))
	writePNG("vietqr-tilted.png", tilt(code(vcb, 320), 20))
	writeJPEG("vietqr-lowcontrast.jpg", lowContrast(code(vcb, 320)), 85)
	writePNG("unknown-bin.png", code(unknownBIN, 320))
	writePNG("bad-crc.png", code(vcb[:len(vcb)-4]+"0000", 320))
	writePNG("not-vietqr.png", code("https://example.com/not-a-bank", 320))
	writePNG("not-qr.png", gradient(320))
}

func code(payload string, size int) image.Image {
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		panic(err)
	}
	return q.Image(size)
}

func rotate90(src image.Image) image.Image {
	b := src.Bounds()
	out := image.NewGray(image.Rect(0, 0, b.Dy(), b.Dx()))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.Set(b.Max.Y-1-y, x, src.At(x, y))
		}
	}
	return out
}

// tilt turns src by degrees about its centre onto a white canvas that holds
// all of it (nearest-neighbour sampling, as a photo of a tilted code).
func tilt(src image.Image, degrees float64) image.Image {
	b := src.Bounds()
	rad := degrees * math.Pi / 180
	sin, cos := math.Sin(rad), math.Cos(rad)
	w, h := float64(b.Dx()), float64(b.Dy())
	side := int(math.Ceil(w*math.Abs(cos) + h*math.Abs(sin)))
	out := image.NewGray(image.Rect(0, 0, side, side))
	cx, cy := w/2, h/2
	oc := float64(side) / 2
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			dx, dy := float64(x)-oc, float64(y)-oc
			sx, sy := cos*dx+sin*dy+cx, -sin*dx+cos*dy+cy
			g := color.Gray{Y: 255}
			if sx >= 0 && sy >= 0 && sx < w && sy < h {
				g = color.GrayModel.Convert(src.At(b.Min.X+int(sx), b.Min.Y+int(sy))).(color.Gray)
			}
			out.SetGray(x, y, g)
		}
	}
	return out
}

// lowContrast maps black to mid grey (100) and white to light grey (195).
func lowContrast(src image.Image) image.Image {
	b := src.Bounds()
	out := image.NewGray(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g := color.GrayModel.Convert(src.At(x, y)).(color.Gray)
			out.SetGray(x, y, color.Gray{Y: 100 + g.Y*3/8})
		}
	}
	return out
}

func gradient(size int) image.Image {
	out := image.NewRGBA(image.Rect(0, 0, size, size))
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			out.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	return out
}

func writePNG(name string, img image.Image) {
	f, err := os.Create(name)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		panic(err)
	}
}

func writeJPEG(name string, img image.Image, quality int) {
	f, err := os.Create(name)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := jpeg.Encode(f, img, &jpeg.Options{Quality: quality}); err != nil {
		panic(err)
	}
}
