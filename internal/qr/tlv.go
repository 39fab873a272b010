// Package qr encodes and decodes EMVCo merchant-presented QR payloads (EMV QR
// Code Specification for Payment Systems, Merchant-Presented Mode, v1.1) and
// builds the national variants payd shows payers: VietQR (Vietnam), QRIS
// (Indonesia), Thai QR PromptPay and KHQR (Cambodia).
//
// A payload is a string of data objects, each a two-digit ID, a two-digit
// length and a value of that many characters. Some values are themselves
// strings of data objects (templates). The first object is the payload format
// indicator (ID 00) and the last is a CRC (ID 63) over everything before it.
package qr

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	// maxPayloadChars is the most characters EMVCo MPM allows in a payload,
	// CRC included.
	maxPayloadChars = 512
	// maxValueChars is the longest value a two-digit length can announce.
	// EMVCo MPM lengths run from 01 to 99: an object with no value is left
	// out, never sent empty.
	maxValueChars = 99
	// crcHeader is the ID and length of the CRC field, which the CRC covers.
	crcHeader = idCRC + "04"
)

// Errors returned by Decode, possibly wrapped; test with errors.Is.
var (
	// ErrSyntax means the payload is not a well-formed string of data
	// objects: an ID or length that is not two digits, a length of 00 or
	// past the end, a template whose value is not itself well formed, a CRC
	// that is not the last object, or a first object that is not the
	// payload format indicator.
	ErrSyntax = errors.New("malformed QR payload")
	// ErrTooLong means the payload has more characters than EMVCo allows.
	ErrTooLong = errors.New("QR payload longer than 512 characters")
	// ErrNoCRC means the payload does not end with a CRC field (ID 63).
	ErrNoCRC = errors.New("QR payload has no CRC")
	// ErrCRC means the CRC field does not match the payload: the code was
	// misread, truncated or altered.
	ErrCRC = errors.New("QR payload CRC mismatch")
)

// Field is one data object of a payload. A primitive object has a Value; a
// template has its nested objects in Sub. Decode fills Sub for the top-level
// templates (see Payload.Template) and also leaves their raw text in Value;
// Encode writes Sub when it is non-empty, after checking that a Value given
// alongside it says the same thing.
type Field struct {
	ID    string
	Value string
	Sub   []Field
}

// Encode returns the payload for fields, in the order given, with the CRC
// field appended. The first field must be the payload format indicator
// (ID 00) and none may be the CRC (ID 63). It refuses, with an *InputError,
// IDs that are not two digits and values that are empty, longer than 99
// characters or not UTF-8, and returns ErrTooLong for a payload over 512
// characters.
func Encode(fields []Field) (string, error) {
	if len(fields) == 0 || fields[0].ID != idPayloadFormat {
		return "", &InputError{Field: "payload", Reason: "first field is not the payload format indicator (ID 00)"}
	}
	var b strings.Builder
	for _, f := range fields {
		if f.ID == idCRC {
			return "", &InputError{Field: idCRC, Reason: "the CRC field is appended by Encode"}
		}
		if err := writeField(&b, f, ""); err != nil {
			return "", err
		}
	}
	b.WriteString(crcHeader)
	b.WriteString(CRC16(b.String()))
	payload := b.String()
	if n := utf8.RuneCountInString(payload); n > maxPayloadChars {
		return "", fmt.Errorf("%w: %d characters", ErrTooLong, n)
	}
	return payload, nil
}

// writeField appends f to b. parent is the path of the enclosing template,
// for error messages ("26" for the objects inside template 26).
func writeField(b *strings.Builder, f Field, parent string) error {
	path := f.ID
	if parent != "" {
		path = parent + "." + f.ID
	}
	if !isTwoDigits(f.ID) {
		where := parent
		if where == "" {
			where = "payload"
		}
		return &InputError{Field: where, Reason: fmt.Sprintf("field ID %q is not two digits", f.ID)}
	}
	value, err := fieldValue(f, path)
	if err != nil {
		return err
	}
	n := utf8.RuneCountInString(value)
	if n == 0 || n > maxValueChars {
		return &InputError{Field: path, Reason: fmt.Sprintf("value has %d characters, want 1 to %d", n, maxValueChars)}
	}
	b.WriteString(f.ID)
	b.WriteByte(byte('0' + n/10)) // n is 1 to 99: two digits
	b.WriteByte(byte('0' + n%10))
	b.WriteString(value)
	return nil
}

// fieldValue returns the text of f's value: Value for a primitive object, the
// encoding of Sub for a template.
func fieldValue(f Field, path string) (string, error) {
	if len(f.Sub) == 0 {
		if !utf8.ValidString(f.Value) {
			return "", &InputError{Field: path, Reason: "value is not valid UTF-8"}
		}
		return f.Value, nil
	}
	var b strings.Builder
	for _, sub := range f.Sub {
		if err := writeField(&b, sub, path); err != nil {
			return "", err
		}
	}
	if f.Value != "" && f.Value != b.String() {
		return "", &InputError{Field: path, Reason: "Value and Sub disagree"}
	}
	return b.String(), nil
}

// Decode parses a payload, verifies its CRC and returns its data objects. It
// accepts at most 512 characters and, as a reader of codes printed by
// others, a CRC in lower-case hex; the templates EMVCo defines at the top
// level are parsed one level deep (see Payload.Template). Errors wrap
// ErrTooLong, ErrSyntax, ErrNoCRC or ErrCRC.
func Decode(payload string) (Payload, error) {
	if len(payload) > maxPayloadChars*utf8.UTFMax || utf8.RuneCountInString(payload) > maxPayloadChars {
		return Payload{}, ErrTooLong
	}
	if !utf8.ValidString(payload) {
		return Payload{}, fmt.Errorf("%w: not valid UTF-8", ErrSyntax)
	}
	fields, err := parseFields(payload)
	if err != nil {
		return Payload{}, err
	}
	if err := checkCRC(payload, fields); err != nil {
		return Payload{}, err
	}
	fields = fields[:len(fields)-1]
	// EMVCo MPM: the payload format indicator is the first data object.
	if len(fields) == 0 || fields[0].ID != idPayloadFormat {
		return Payload{}, fmt.Errorf("%w: first field is not the payload format indicator (ID 00)", ErrSyntax)
	}
	for i, f := range fields {
		if !isTemplate(f.ID) {
			continue
		}
		sub, err := parseFields(f.Value)
		if err != nil {
			return Payload{}, fmt.Errorf("template %s: %w", f.ID, err)
		}
		fields[i].Sub = sub
	}
	return Payload{fields: fields}, nil
}

// checkCRC enforces the EMVCo MPM rule that the CRC is the last data object,
// four hex digits computed over everything before them.
func checkCRC(payload string, fields []Field) error {
	last := len(fields) - 1
	for _, f := range fields[:max(last, 0)] {
		if f.ID == idCRC {
			return fmt.Errorf("%w: CRC field (ID 63) is not the last field", ErrSyntax)
		}
	}
	if last < 0 || fields[last].ID != idCRC {
		return ErrNoCRC
	}
	got := fields[last].Value
	if len(got) != 4 || !isHex(got) {
		return fmt.Errorf("%w: CRC %q is not four hex digits", ErrSyntax, got)
	}
	want := CRC16(payload[:len(payload)-len(got)])
	if !strings.EqualFold(got, want) {
		return fmt.Errorf("%w: payload says %s, computed %s", ErrCRC, got, want)
	}
	return nil
}

// parseFields splits s into its data objects, without looking inside them.
func parseFields(s string) ([]Field, error) {
	var fields []Field
	for off := 0; off < len(s); {
		f, n, err := parseField(s[off:])
		if err != nil {
			return nil, fmt.Errorf("%w at byte %d: %v", ErrSyntax, off, err)
		}
		fields = append(fields, f)
		off += n
	}
	return fields, nil
}

// parseField reads the data object at the start of s and returns it with the
// number of bytes it takes. The length counts characters, not bytes: EMVCo's
// alternate-language template (ID 64) carries UTF-8 text such as "北京" under
// length 02.
func parseField(s string) (Field, int, error) {
	if len(s) < 4 {
		return Field{}, 0, fmt.Errorf("%q is too short for an ID and a length", s)
	}
	id, length := s[:2], s[2:4]
	if !isTwoDigits(id) {
		return Field{}, 0, fmt.Errorf("ID %q is not two digits", id)
	}
	if !isTwoDigits(length) {
		return Field{}, 0, fmt.Errorf("field %s: length %q is not two digits", id, length)
	}
	n := int(length[0]-'0')*10 + int(length[1]-'0')
	if n == 0 {
		return Field{}, 0, fmt.Errorf("field %s: length is 00", id)
	}
	size, ok := charsToBytes(s[4:], n)
	if !ok {
		return Field{}, 0, fmt.Errorf("field %s: length %d runs past the end", id, n)
	}
	return Field{ID: id, Value: s[4 : 4+size]}, 4 + size, nil
}

// charsToBytes returns how many bytes the first n characters of s take, and
// false if s has fewer than n characters.
func charsToBytes(s string, n int) (int, bool) {
	size := 0
	for ; n > 0 && size < len(s); n-- {
		_, width := utf8.DecodeRuneInString(s[size:])
		size += width
	}
	return size, n == 0
}

// isTemplate reports whether EMVCo MPM defines the top-level ID as a template
// of nested data objects: merchant account information (26–51), additional
// data (62), merchant information in an alternate language (64) and the
// unreserved templates (80–99).
func isTemplate(id string) bool {
	n := int(id[0]-'0')*10 + int(id[1]-'0')
	return 26 <= n && n <= 51 || n == 62 || n == 64 || n >= 80
}

// isTwoDigits reports whether s is exactly two ASCII digits, the form of
// every ID and length.
func isTwoDigits(s string) bool {
	return len(s) == 2 && isDigits(s)
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isHex reports whether s is one or more hex digits, of either case.
func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
