package input

import (
	"bytes"
	"encoding/json"
	"strconv"

	"payd/internal/fault"
)

// JSON checks every string of a JSON document that decoded (its members'
// names too), and answers the first that breaks the rule as a 422 naming
// its path (payout_transaction_details[0].name). A JSON string cannot hold
// a raw control character, only an escape of one, so a document without a
// backslash is checked without being walked.
func JSON(doc []byte) error {
	if bytes.IndexByte(doc, '\\') < 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	err := walk(dec, "")
	if _, ok := fault.As(err); ok {
		return err
	}
	return nil // not JSON: the decoder that read it already said so
}

// walk checks the value dec is at, named path.
func walk(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case string:
		return Check(orBody(path), v)
	case json.Delim:
		switch v {
		case '{':
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := tok.(string)
				if p := problem(key, false); p != "" {
					return fault.Field(join(path, Quote(key)), "is a member name that "+p)
				}
				if err := walk(dec, join(path, key)); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walk(dec, orBody(path)+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
		_, err := dec.Token() // the closing delimiter
		return err
	}
	return nil
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
