package payin

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

// Bounds of method parameters.
const (
	maxParams     = 30
	maxParamBytes = 2048
)

func checkText(max int) func(any) string {
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

func checkURL(v any) string {
	u, err := url.Parse(v.(string))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(v.(string)) > 2048 {
		return "must be an absolute http(s) URL"
	}
	return ""
}

func checkIP(v any) string {
	if _, err := netip.ParseAddr(v.(string)); err != nil {
		return "must be an IPv4 or IPv6 address"
	}
	return ""
}

var phonePattern = regexp.MustCompile(`^\+?[0-9][0-9 -]{5,18}[0-9]$`)

func checkPhone(v any) string {
	if !phonePattern.MatchString(v.(string)) {
		return "must be a phone number such as +61412345678"
	}
	return ""
}

func checkEmail(v any) string {
	s := v.(string)
	if a, err := mail.ParseAddress(s); err != nil || a.Address != s || len(s) > 254 {
		return "must be an email address"
	}
	return ""
}

var codePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{2,20}$`)

func checkCode(v any) string {
	if !codePattern.MatchString(v.(string)) {
		return "must be a bank code of 2 to 20 letters or digits"
	}
	return ""
}

func checkOneOf(allowed ...string) func(any) string {
	return func(v any) string {
		for _, a := range allowed {
			if v.(string) == a {
				return ""
			}
		}
		return "must be one of " + strings.Join(allowed, ", ")
	}
}

// checkKatakana accepts full-width or half-width katakana, with spaces and
// the prolonged sound mark, as Japanese bank transfers require.
func checkKatakana(v any) string {
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

// validateParams checks payin_method_params against the method: types,
// mandatory members, per-member rules and the method's cross-member rules.
// Unknown members are kept (integrations send extras) but bounded in size.
func validateParams(m Method, params map[string]any, f fault.Fields) {
	if len(params) > maxParams {
		f.Add("payin_method_params", fmt.Sprintf("has more than %d members", maxParams))
		return
	}
	for k, v := range params {
		if len(k) > 64 {
			f.Add("payin_method_params", "has a member name longer than 64 characters")
		}
		if s, ok := v.(string); ok && len(s) > maxParamBytes {
			f.Add("payin_method_params."+k, fmt.Sprintf("is longer than %d bytes", maxParamBytes))
		}
	}
	for _, p := range m.Params {
		name := "payin_method_params." + p.Name
		v, present := params[p.Name]
		if !present || v == nil || v == "" {
			if p.Mandatory {
				f.Add(name, "is required for "+m.Code)
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
	if m.Code == "ug_bank_ugx" {
		requireByUserType(params, "payin_method_params.", true, f)
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

// requireByUserType enforces the ug_bank_ugx rule of the spec: validation
// depends on user_type. Individuals give first_name, last_name and phone
// (payouts: phone only, names excluded); businesses give business_name and
// registration_number.
func requireByUserType(params map[string]any, prefix string, withNames bool, f fault.Fields) {
	var need []string
	switch params["user_type"] {
	case "individual":
		need = []string{"phone"}
		if withNames {
			need = []string{"first_name", "last_name", "phone"}
		}
	case "business":
		need = []string{"business_name", "registration_number"}
	default:
		return
	}
	for _, n := range need {
		if s, _ := params[n].(string); strings.TrimSpace(s) == "" {
			f.Add(prefix+n, fmt.Sprintf("is required when user_type is %s", params["user_type"]))
		}
	}
}
