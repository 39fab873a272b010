// Package iso20022 writes and reads the ISO 20022 messages of the bank-file
// rail (CONTRACT §17, §25): the pain.001.001.10 credit transfer initiation
// payd sends its bank (WritePain001, and ReadPain001 that the tests use to
// check a written file holds exactly its credits) and the pain.002.001.11
// status report the bank answers with (ReadPain002).
//
// Messages are built with encoding/xml from the few elements payd uses; every
// file WritePain001 makes in the tests is validated against the official XSD
// (../shared/iso20022/). What the schema cannot hold is refused by name
// before a byte is written (a *payfile.FieldError naming the credit, the
// field and the pain.001 element), never cut or mangled: a bank would reject
// the whole file, and with it every transfer of the cut-off.
//
// Text may be any Unicode (the file is UTF-8) except control characters:
// banks that restrict pain.001 to a Latin set do so beyond the schema, and a
// JPY file carries kana. Tab, CR and LF are allowed only in a description
// (CONTRACT §24), where they are written as character references so that
// they survive XML's line-end normalisation.
package iso20022

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"unicode/utf8"
)

// The namespaces of the two message versions payd speaks. CONTRACT §17
// names them; a message in another version is refused, not guessed at.
const (
	NamespacePain001 = "urn:iso:std:iso:20022:tech:xsd:pain.001.001.10"
	NamespacePain002 = "urn:iso:std:iso:20022:tech:xsd:pain.002.001.11"
)

// maxMessageBytes bounds what ReadPain001 and ReadPain002 take: a
// 10,000-transfer pain.001 is about 10 MB, and an inbox file larger than this
// is not a status report of payd's.
const maxMessageBytes = 64 << 20

// Lengths of the schema's text types, in characters.
const (
	max34Text   = 34
	max35Text   = 35
	max140Text  = 140
	max2048Text = 2048
)

// Clearing system codes (ExternalClearingSystemIdentification1Code) of the
// agents payd names by their member id (CONTRACT §25): an Australian BSB
// (six digits) and a Zengin bank and branch (seven digits).
const (
	clearingBSB    = "AUBSB"
	clearingZengin = "JPZGN"
)

// noAccount is the creditor account's Othr/Id when the credit goes to a
// PayID: the schema requires an account id beside the proxy, and payd knows
// only the PayID (CONTRACT §25: CdtrAcct/Prxy/Id).
const noAccount = "NOTPROVIDED"

var (
	// referencePattern is a bank reference or a file reference (CONTRACT
	// §17: [A-Z0-9]; §25 gives pain001 rails 16) within Max35Text.
	referencePattern = regexp.MustCompile(`^[A-Z0-9]{1,35}$`)
	// bicPattern is BICFIDec2014Identifier.
	bicPattern    = regexp.MustCompile(`^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	bsbPattern    = regexp.MustCompile(`^[0-9]{3}-[0-9]{3}$`)
	bankPattern   = regexp.MustCompile(`^[0-9]{4}$`)
	branchPattern = regexp.MustCompile(`^[0-9]{3}$`)
)

// textProblem says why s cannot be a schema text of at most max characters
// (Max35Text, Max140Text, …: at least one character), or "" when it can.
// multiline allows tab, CR and LF (a description's, CONTRACT §24).
func textProblem(s string, max int, multiline bool) string {
	if s == "" {
		return "must not be empty"
	}
	if !utf8.ValidString(s) {
		return "must be UTF-8"
	}
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Sprintf("must be at most %d characters (got %d)", max, n)
	}
	for _, r := range s {
		if !textRune(r, multiline) {
			return fmt.Sprintf("must not hold %U (a control character or one XML cannot carry)", r)
		}
	}
	return ""
}

// NameProblem says what is wrong with s as a name pain.001 carries (the
// creditor's Cdtr/Nm, the remitter's UltmtDbtr/Nm: at most 140 characters,
// no control characters), or "" when nothing is. The rail calls it when a
// payout is created, so that a name the file cannot hold is refused there
// (422 naming the field) rather than failing its transfer at the cut-off.
// Unlike ABA and Zengin, pain.001 cuts no name to a field, so it judges
// length.
func NameProblem(s string) string {
	return textProblem(s, max140Text, false)
}

// DescriptionProblem says what is wrong with s as a transfer's remittance
// information (RmtInf/Ustrd: at most 140 characters, no control characters
// but tab, CR and LF), or "" when nothing is; an empty description is left
// out of the file. A payout's description may have up to 255 characters, so
// the rail calls it when a payout is created for a method a pain001 rail
// serves, for the reason NameProblem says.
func DescriptionProblem(s string) string {
	if s == "" {
		return ""
	}
	return textProblem(s, max140Text, true)
}

// referenceProblem says why s cannot be a bank or file reference, or "".
func referenceProblem(s string) string {
	if !referencePattern.MatchString(s) {
		return fmt.Sprintf("must be 1 to %d of A-Z and 0-9 (got %q)", max35Text, s)
	}
	return ""
}

// textRune reports whether r may appear in a text payd writes: a character
// XML 1.0 allows that is not a control character (C0, DEL, C1), tab, CR and
// LF only when multiline.
func textRune(r rune, multiline bool) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return multiline
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return false
	case r <= 0xd7ff:
		return true
	case r >= 0xe000 && r <= 0xfffd:
		return true
	case r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}

// ErrNamespace means a message is not in the version payd reads: a
// pain.002.001.03 status report, say, where payd reads pain.002.001.11.
var ErrNamespace = errors.New("not the ISO 20022 message version payd reads")

// decodeDocument decodes data's root element, a Document in namespace, into
// v. The namespace is checked before anything else, so that a message of
// another version is refused as such rather than read by accident (its
// elements are often named alike).
func decodeDocument(data []byte, namespace string, v any) error {
	if len(data) > maxMessageBytes {
		return fmt.Errorf("%d bytes, more than %d", len(data), maxMessageBytes)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return errors.New("no root element")
		}
		if err != nil {
			return err
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if start.Name.Space != namespace || start.Name.Local != "Document" {
			return fmt.Errorf("root {%s}%s, want {%s}Document: %w", start.Name.Space, start.Name.Local, namespace, ErrNamespace)
		}
		return d.DecodeElement(v, &start)
	}
}
