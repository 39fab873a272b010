// Package param describes and checks the method-specific fields of payins and
// payouts (payin_method_params, payout_method_params): each method lists its
// fields as data, and one validator enforces them.
package param

import (
	"fmt"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"payd/internal/fault"
)

// Param is a method-specific field to collect, as GET payin_method/params
// and payout_method/params describe it: "<type>:<Mandatory|Optional> <label>".
type Param struct {
	Name      string
	Type      string // "string" or "boolean"
	Mandatory bool
	Label     string
	// Check validates a present value; nil accepts any value of Type.
	Check func(v any) string
}

// Describe renders the contract's "string:Mandatory callback URL" form.
func (p Param) Describe() string {
	m := "Optional"
	if p.Mandatory {
		m = "Mandatory"
	}
	return p.Type + ":" + m + " " + p.Label
}

// Bounds of method parameters.
const (
	MaxCount = 30
	MaxBytes = 2048
)

func Text(max int) func(any) string {
	return func(v any) string {
		s := v.(string)
		if strings.TrimSpace(s) == "" {
			return "must not be blank"
		}
		if utf8.RuneCountInString(s) > max {
			return fmt.Sprintf("must be at most %d characters", max)
		}
		return ""
	}
}

func URL(v any) string {
	u, err := url.Parse(v.(string))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(v.(string)) > 2048 {
		return "must be an absolute http(s) URL"
	}
	return ""
}

func IP(v any) string {
	if _, err := netip.ParseAddr(v.(string)); err != nil {
		return "must be an IPv4 or IPv6 address"
	}
	return ""
}

var phonePattern = regexp.MustCompile(`^\+?[0-9][0-9 -]{5,18}[0-9]$`)

func Phone(v any) string {
	if !phonePattern.MatchString(v.(string)) {
		return "must be a phone number such as +61412345678"
	}
	return ""
}

func Email(v any) string {
	s := v.(string)
	if a, err := mail.ParseAddress(s); err != nil || a.Address != s || len(s) > 254 {
		return "must be an email address"
	}
	return ""
}

var codePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{2,20}$`)

func Code(v any) string {
	if !codePattern.MatchString(v.(string)) {
		return "must be a bank code of 2 to 20 letters or digits"
	}
	return ""
}

func OneOf(allowed ...string) func(any) string {
	return func(v any) string {
		for _, a := range allowed {
			if v.(string) == a {
				return ""
			}
		}
		return "must be one of " + strings.Join(allowed, ", ")
	}
}

// Katakana accepts full-width or half-width katakana, with spaces and
// the prolonged sound mark, as Japanese bank transfers require.
func Katakana(v any) string {
	s := v.(string)
	if strings.TrimSpace(s) == "" || utf8.RuneCountInString(s) > 100 {
		return "must be 1 to 100 katakana characters"
	}
	for _, r := range s {
		if !unicode.In(r, unicode.Katakana) && r != ' ' && r != '　' && r != 'ー' && r != '･' && r != 'ﾞ' && r != 'ﾟ' {
			return "must be katakana (for example ヤマダ or ﾔﾏﾀﾞ)"
		}
	}
	return ""
}

// Validate checks params, the member named field (payin_method_params,
// payout_transaction_details[3].payout_method_params), against the fields of
// method: types, mandatory members and per-member rules, then the rules
// that span members, each problem added to f under its member's name.
// Unknown members are kept (integrations send extras) but bounded in count
// and size.
func Validate(field, method string, fields []Param, rules []Rule, params map[string]any, f fault.Fields) {
	checkMembers(field, method, fields, params, f)
	for _, rule := range rules {
		rule(f, field, method, params)
	}
}

// checkMembers is Validate's check of each member.
func checkMembers(field, method string, fields []Param, params map[string]any, f fault.Fields) {
	if len(params) > MaxCount {
		f.Add(field, fmt.Sprintf("has more than %d members", MaxCount))
		return
	}
	for k, v := range params {
		if len(k) > 64 {
			f.Add(field, "has a member name longer than 64 characters")
		}
		if s, ok := v.(string); ok && len(s) > MaxBytes {
			f.Add(field+"."+k, fmt.Sprintf("is longer than %d bytes", MaxBytes))
		}
	}
	for _, p := range fields {
		name := field + "." + p.Name
		v, present := params[p.Name]
		if !present || v == nil || v == "" {
			if p.Mandatory {
				f.Add(name, "is required for "+method)
			}
			continue
		}
		if !hasType(v, p.Type) {
			f.Add(name, "must be a "+p.Type)
			continue
		}
		if p.Check != nil {
			if problem := p.Check(v); problem != "" {
				f.Add(name, problem)
			}
		}
	}
}

func hasType(v any, typ string) bool {
	switch typ {
	case "boolean":
		_, ok := v.(bool)
		return ok
	default:
		_, ok := v.(string)
		return ok
	}
}
