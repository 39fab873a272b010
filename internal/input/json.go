package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"payd/internal/fault"
)

// JSON checks every string of a JSON document that decoded (its members'
// names too), and answers the first that breaks the rule as a 422 naming
// its path (payout_transaction_details[0].name). A JSON string cannot hold
// a raw control character, only an escape of one, so a document without a
// backslash is checked without being walked.
func JSON(doc []byte) error { return JSONIn("", doc) }

// JSONIn is JSON for a document that is itself the value of member name (a
// multipart part holding JSON, such as webhook_notification): the paths it
// names start with name.
func JSONIn(name string, doc []byte) error {
	if bytes.IndexByte(doc, '\\') < 0 {
		return nil
	}
	err := walkDoc(name, doc, func(path string, tok json.Token, _ int64) error {
		if s, ok := tok.(string); ok {
			return Check(path, s)
		}
		return nil
	})
	if _, ok := fault.As(err); ok {
		return err
	}
	return nil // not JSON: the decoder that read it already said so
}

// PathAt names, with its array indexes, the value of doc whose first token
// ends at offset: where encoding/json's UnmarshalTypeError points (its Field
// leaves the indexes out). ok is false when no value ends there.
func PathAt(doc []byte, offset int64) (path string, ok bool) {
	errFound := errors.New("found")
	err := walkDoc("", doc, func(p string, _ json.Token, end int64) error {
		if end == offset {
			path = p
			return errFound
		}
		return nil
	})
	return path, errors.Is(err, errFound)
}

// Value is one value of a document, where it is and its JSON text.
type Value struct {
	Path string
	Raw  json.RawMessage
}

// Find returns the values of doc whose paths, without their array indexes
// (Unindexed), are field: where encoding/json's UnmarshalTypeError from a
// type's own UnmarshalJSON points, which names the member but not which
// element of an array held it.
func Find(doc []byte, field string) []Value {
	var out []Value
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	_ = find(dec, "", field, &out)
	return out
}

func find(dec *json.Decoder, path, field string, out *[]Value) error {
	if path != "" && Unindexed(path) == field {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		*out = append(*out, Value{Path: path, Raw: raw})
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			if err := find(dec, join(path, key), field, out); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := find(dec, orBody(path)+"["+strconv.Itoa(i)+"]", field, out); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	_, err = dec.Token()
	return err
}

// Unindexed is path without its array indexes: a[1].b[0].c is a.b.c.
func Unindexed(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '[' {
			for i < len(path) && path[i] != ']' {
				i++
			}
			continue
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// visit sees each value of a document: its path, its first token (a string,
// another literal, or the delimiter that opens it) and the offset where that
// token ends. A member's name is checked by the walk itself.
type visit func(path string, tok json.Token, end int64) error

func walkDoc(name string, doc []byte, v visit) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	return walk(dec, name, v)
}

// walk reads the value dec is at, named path.
func walk(dec *json.Decoder, path string, v visit) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if err := v(orBody(path), tok, dec.InputOffset()); err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			if p := problem(key, false); p != "" {
				return fault.Field(join(path, Quote(key)), "is a member name that "+p)
			}
			if err := walk(dec, join(path, key), v); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walk(dec, orBody(path)+"["+strconv.Itoa(i)+"]", v); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// orBody names the document itself when it is a bare string or array.
func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}
