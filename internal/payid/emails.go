package payid

import (
	"encoding/json"
	"reflect"
	"strings"
)

// Emails are the addresses a payment request tells of itself. Public
// integrations send them as one comma-separated string ("a@x.com,b@y.com");
// a JSON array of strings reads the same (CONTRACT §24). The addresses of a
// string are trimmed, and an empty one (two commas in a row, or one at either
// end) is kept for validate to refuse by its index; a blank string is no
// addresses, as [] is.
type Emails []string

// UnmarshalJSON reads either form. Any other JSON type, or an array that
// holds anything but strings, is the decoder's wrong type for the member
// (CONTRACT §3: a 400 naming it); its message asks for the string that
// public integrations send.
func (e *Emails) UnmarshalJSON(data []byte) error {
	switch data[0] {
	case 'n': // null: as if absent
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*e = splitEmails(s)
		return nil
	case '[':
		var list []string
		if err := json.Unmarshal(data, &list); err != nil {
			return wrongEmailsType("array")
		}
		*e = list
		return nil
	case '{':
		return wrongEmailsType("object")
	case 't', 'f':
		return wrongEmailsType("bool")
	}
	return wrongEmailsType("number")
}

// splitEmails reads the comma-separated form. It splits off no more than one
// address past the bound: that is enough to refuse the count, however many
// commas the string holds.
func splitEmails(s string) Emails {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	list := strings.SplitN(s, ",", maxEmails+1)
	for i, a := range list {
		list[i] = strings.TrimSpace(a)
	}
	return list
}

// wrongEmailsType is the decoder's error for emails of another JSON type.
// Its Offset is left 0, a place in no body, so the decoder names the member
// from the field it adds (emails).
func wrongEmailsType(value string) error {
	return &json.UnmarshalTypeError{Value: value, Type: reflect.TypeFor[string]()}
}
