package input

import (
	"net/url"
	"testing"

	"payd/internal/fault"
)

func TestProblem(t *testing.T) {
	tests := []struct {
		name, member, value string
		refused             bool
	}{
		{"plain text", "name", "Jane Doe", false},
		{"unicode", "name", "山田 太郎", false},
		{"NUL", "name", "a\x00b", true},
		{"escape", "name", "a\x1bb", true},
		{"unit separator", "name", "\x1f", true},
		{"tab in a name", "name", "a\tb", true},
		{"newline in a name", "address", "1 Main St\nSydney", true},
		{"newline in a description", "description", "line one\r\nline two\tend", false},
		{"newline in a nested reason", "payout_transaction_details[3].reason", "a\nb", false},
		{"NUL in a description", "description", "a\x00", true},
		{"DEL is not C0", "name", "a\x7fb", false},
		{"broken UTF-8", "name", "a\xffb", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problem(tt.member, tt.value) != ""
			if got != tt.refused {
				t.Errorf("Problem(%q, %q) refused = %v, want %v", tt.member, tt.value, got, tt.refused)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name, doc string
		field     string // "" when accepted
	}{
		{"no escapes", `{"name":"a","n":[1,2]}`, ""},
		{"harmless escapes", `{"name":"say \"hi\" \/ \u00e9"}`, ""},
		{"NUL at the top", `{"currency":"AUD","external_id":"x\u0000"}`, "external_id"},
		{"NUL in an array of objects", `{"payout_transaction_details":[{"name":"a"},{"name":"\u0000"}]}`, "payout_transaction_details[1].name"},
		{"NUL in an array of strings", `{"emails":["a@b.c","\u0000"]}`, "emails[1]"},
		{"newline in a description", `{"description":"a\nb","x":{"reason":"c\r\nd\t"}}`, ""},
		{"newline in a name", `{"name":"a\nb"}`, "name"},
		{"NUL in a member name", `{"na\u0000me":"a"}`, `na\x00me`},
		{"NUL in an unknown member", `{"zzz":{"deep":["\u0001"]}}`, "zzz.deep[0]"},
		{"a bare string", `"\u0000"`, "body"},
		{"not JSON", `{"a":"\"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := JSON([]byte(tt.doc))
			var got string
			if e, ok := fault.As(err); ok {
				for k := range e.Fields {
					got = k
				}
				if e.Code != fault.CodeValidation || e.Kind != fault.Invalid {
					t.Errorf("code %s kind %d, want VALIDATION_FAILED, Invalid", e.Code, e.Kind)
				}
			} else if err != nil {
				t.Fatalf("err %v is not a fault", err)
			}
			if got != tt.field {
				t.Errorf("JSON(%s) names %q, want %q", tt.doc, got, tt.field)
			}
		})
	}
}

func TestJSONIn(t *testing.T) {
	err := JSONIn("webhook_notification", []byte(`{"url":"https://a.example/\u0000"}`))
	e, ok := fault.As(err)
	if !ok || e.Fields["webhook_notification.url"] == "" {
		t.Errorf("JSONIn = %v, want a 422 naming webhook_notification.url", err)
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		name      string
		v         url.Values
		multiline []string
		field     string
	}{
		{"clean", url.Values{"status": {"held"}, "page": {"2"}}, nil, ""},
		{"NUL in a value", url.Values{"status": {"\x00"}}, nil, "status"},
		{"NUL in a repeated value", url.Values{"roles": {"admin", "a\x00"}}, nil, "roles"},
		{"NUL in a name", url.Values{"a\x00": {"x"}}, nil, `a\x00`},
		{"newline in a reason", url.Values{"reason": {"a\r\nb"}}, nil, ""},
		{"newline in a textarea", url.Values{"params": {"bsb=062000\r\naccount_number=1"}}, []string{"params"}, ""},
		{"newline elsewhere", url.Values{"email": {"a\n@b.c"}}, []string{"params"}, "email"},
		{"broken UTF-8", url.Values{"currency": {"\xff"}}, nil, "currency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Values(tt.v, tt.multiline...)
			var got string
			if e, ok := fault.As(err); ok {
				for k := range e.Fields {
					got = k
				}
			}
			if got != tt.field {
				t.Errorf("Values(%q) names %q, want %q", tt.v, got, tt.field)
			}
		})
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":"\u0000"}`))
	f.Add([]byte(`{"a":[{"b":"\n"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		_ = JSON(doc) // never panics
	})
}

func TestPathAt(t *testing.T) {
	tests := []struct {
		name, doc string
		offset    int64 // where encoding/json's UnmarshalTypeError points
		want      string
	}{
		{"a string in the second element", `{"details":[{"amount":1},{"amount":"x"}]}`, 38, "details[1].amount"},
		{"an object where a number goes", `{"details":[{"sub":[{"amount":1},{"amount":{}}]}]}`, 44, "details[0].sub[1].amount"},
		{"an array where a number goes", `{"details":[{"amount":1},{"amount":[1,2]}]}`, 36, "details[1].amount"},
		{"an object where an array goes", `{"details":{"a":1}}`, 12, "details"},
		{"nothing ends there", `{"a":1}`, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := PathAt([]byte(tt.doc), tt.offset)
			if got != tt.want {
				t.Errorf("PathAt(%s, %d) = %q, want %q", tt.doc, tt.offset, got, tt.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	doc := []byte(`{"d":[{"amount":"1.00"},{"amount":{"v":1}}],"amount":2}`)
	got := Find(doc, "d.amount")
	if len(got) != 2 || got[0].Path != "d[0].amount" || got[1].Path != "d[1].amount" || string(got[1].Raw) != `{"v":1}` {
		t.Errorf("Find = %+v", got)
	}
	if got := Unindexed("a[1].b[20].c"); got != "a.b.c" {
		t.Errorf("Unindexed = %q", got)
	}
}
