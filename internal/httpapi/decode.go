package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/money"
)

// Body size bounds (CONTRACT §3: every input has a bound).
const (
	maxJSONBodyBytes = 1 << 20
)

// Decoding errors have their own codes: the body cannot be read at all
// (MALFORMED_JSON, MALFORMED_MULTIPART) or a member has the wrong JSON type
// (WRONG_TYPE).
const (
	codeMalformedJSON      = "MALFORMED_JSON"
	codeMalformedMultipart = "MALFORMED_MULTIPART"
	codeWrongType          = "WRONG_TYPE"
)

// decode reads a JSON request body into v. Unknown members are ignored; a
// member of the wrong type is a 400 that names it.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return fault.New(fault.UnsupportedMedia, fault.CodeUnsupportedMedia, "the body must be application/json")
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return bodyReadError(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return fault.New(fault.Malformed, codeMalformedJSON, "the body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		// A string that breaks the input rule is named as such, also
		// where its member wants a time or an amount it cannot be.
		if ctrl := input.JSON(body); ctrl != nil && json.Valid(body) {
			return ctrl
		}
		return jsonError(body, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fault.New(fault.Malformed, codeMalformedJSON, "the body must hold one JSON object and nothing after it")
	}
	return input.JSON(body)
}

func bodyReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return fault.New(fault.TooLarge, fault.CodeTooLarge, "the body is larger than %d bytes", tooBig.Limit)
	}
	return fault.New(fault.Malformed, codeMalformedJSON, "the body could not be read")
}

// jsonError answers a body that did not decode; a member of the wrong type
// is named with its array indexes (payout_transaction_details[1].amount).
func jsonError(body []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return fault.New(fault.Malformed, codeWrongType, "the body must be a JSON object")
		}
		name := indexedName(body, typeErr)
		e := fault.New(fault.Malformed, codeWrongType, "%s %s", name, expected(typeErr.Type))
		e.Fields = map[string]string{name: expected(typeErr.Type)}
		return e
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return fault.New(fault.Malformed, codeMalformedJSON, "the body is not valid JSON")
	default:
		return bodyReadError(err)
	}
}

// indexedName names the member a type error is about with its array
// indexes: the value where the error points or, for a type's own
// UnmarshalJSON (which leaves no offset), the first of the member's
// values that does not decode.
func indexedName(body []byte, typeErr *json.UnmarshalTypeError) string {
	if p, ok := input.PathAt(body, typeErr.Offset); ok && input.Unindexed(p) == typeErr.Field {
		return p
	}
	if typeErr.Type == nil {
		return typeErr.Field
	}
	for _, v := range input.Find(body, typeErr.Field) {
		if json.Unmarshal(v.Raw, reflect.New(typeErr.Type).Interface()) != nil {
			return v.Path
		}
	}
	return typeErr.Field
}

var (
	amountType = reflect.TypeOf(money.Input(""))
	timeType   = reflect.TypeOf(clock.Input{})
)

// expected says, for people, which JSON type a Go type wants.
func expected(t reflect.Type) string {
	switch t {
	case amountType:
		return "must be a number or a decimal string"
	case timeType:
		return "must be a time string such as 2024-07-29T15:51:28.071Z"
	}
	switch t.Kind() {
	case reflect.String:
		return "must be a string"
	case reflect.Bool:
		return "must be a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "must be an integer"
	case reflect.Float32, reflect.Float64:
		return "must be a number"
	case reflect.Slice, reflect.Array:
		return "must be an array"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "must be an object"
	}
	return "has the wrong type"
}
