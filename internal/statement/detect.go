package statement

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// DetectBytes is how much of a file Detect needs: its first 4 KiB (a
// bufio.Reader's Peek of it leaves the file whole for the reader).
const DetectBytes = 4096

// The ISO 20022 namespaces of the camt messages, without their version
// (which the reader checks: CONTRACT §25 reads only .001.08).
const (
	namespaceCamt053Prefix = "urn:iso:std:iso:20022:tech:xsd:camt.053."
	namespaceCamt054Prefix = "urn:iso:std:iso:20022:tech:xsd:camt.054."
)

// csvHeader is the reconciliation upload's header line (CONTRACT §19).
const csvHeader = "date,amount,reference,description"

// Detect tells a bank file's format by its first bytes (CONTRACT §18: "told
// apart by content"): XML whose root is in a camt.053 or camt.054 namespace
// (of any version: the reader refuses any but .001.08 by name), BAI2's
// leading "01," file header, MT940's ":20:" transaction reference (bare, or
// inside the SWIFT envelope {1:…}{2:…}{4:), or §19's CSV header. A UTF-8
// byte order mark and leading blank space are skipped. Anything else is
// ErrUnknownFormat.
func Detect(head []byte) (Format, error) {
	if len(head) > DetectBytes {
		head = head[:DetectBytes]
	}
	text := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n")
	switch {
	case bytes.HasPrefix(text, []byte("<")):
		return detectXML(text)
	case bytes.HasPrefix(text, []byte("01,")):
		return BAI2, nil
	case bytes.HasPrefix(text, []byte(":20:")):
		return MT940, nil
	case bytes.HasPrefix(text, []byte("{1:")):
		return detectEnvelope(text)
	case isCSVHeader(text):
		return CSV, nil
	}
	return "", Errorf("", "", "%w: neither camt.053/camt.054 XML, BAI2 (01,), MT940 (:20:) nor CSV (%s)", ErrUnknownFormat, csvHeader)
}

func detectXML(text []byte) (Format, error) {
	d := xml.NewDecoder(bytes.NewReader(text))
	for {
		tok, err := d.RawToken()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("no root element")
			}
			return "", Errorf("", "", "%w: XML without a root element in its first %d bytes (%v)", ErrUnknownFormat, DetectBytes, err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		space := rootNamespace(start)
		switch {
		case strings.HasPrefix(space, namespaceCamt053Prefix):
			return Camt053, nil
		case strings.HasPrefix(space, namespaceCamt054Prefix):
			return Camt054, nil
		}
		return "", Errorf("", "", "%w: XML root {%s}%s is not a camt.053 or camt.054 Document", ErrUnknownFormat, space, start.Name.Local)
	}
}

// rootNamespace is the namespace of a raw root element: the default
// namespace, or the one its prefix is bound to on the element itself.
func rootNamespace(start xml.StartElement) string {
	for _, a := range start.Attr {
		if a.Name.Space == "" && a.Name.Local == "xmlns" && start.Name.Space == "" {
			return a.Value
		}
		if a.Name.Space == "xmlns" && a.Name.Local == start.Name.Space {
			return a.Value
		}
	}
	return ""
}

// detectEnvelope tells an MT940 inside the SWIFT envelope: its application
// header (block 2, when given) names message type 940, input or output, and
// its text (block 4) starts with ":20:".
func detectEnvelope(text []byte) (Format, error) {
	if i := bytes.Index(text, []byte("{2:")); i >= 0 {
		block := text[i+3:]
		if len(block) < 4 || (block[0] != 'I' && block[0] != 'O') || string(block[1:4]) != "940" {
			return "", Errorf("", "", "%w: a SWIFT message whose block 2 is not of type 940 (not an MT940)", ErrUnknownFormat)
		}
	}
	i := bytes.Index(text, []byte("{4:"))
	if i >= 0 && bytes.HasPrefix(bytes.TrimLeft(text[i+3:], "\r\n"), []byte(":20:")) {
		return MT940, nil
	}
	return "", Errorf("", "", "%w: a SWIFT envelope whose block 4 does not begin with :20: (not an MT940)", ErrUnknownFormat)
}

func isCSVHeader(text []byte) bool {
	line, _, _ := bytes.Cut(text, []byte("\n"))
	return string(bytes.TrimSuffix(line, []byte("\r"))) == csvHeader
}
