package param

import (
	"fmt"
	"strings"

	"payd/internal/fault"
)

// Rule is a method's rule that spans its members, as data beside its
// fields: Validate runs it once every member has passed its own Check. It
// adds each problem to f under field+"."+member; method is the method's code.
type Rule func(f fault.Fields, field, method string, params map[string]any)

// RequiredWhen is the rule that one member's value decides which others
// are required, the spec's ug_bank_ugx rule (validation depends on
// user_type): need maps each value of member to the members it requires,
// each refused when absent or blank. A value need does not list requires
// nothing more (member's own Check refuses a value it does not take).
func RequiredWhen(member string, need map[string][]string) Rule {
	return func(f fault.Fields, field, _ string, params map[string]any) {
		value, _ := params[member].(string)
		for _, n := range need[value] {
			if s, _ := params[n].(string); strings.TrimSpace(s) == "" {
				f.Add(field+"."+n, fmt.Sprintf("is required when %s is %s", member, value))
			}
		}
	}
}

// NotTaken is the rule that a method refuses member outright, even among
// the extra members Validate otherwise keeps, because another member holds
// what it would (th_bank_thb takes the recipient bank's swift_code, never a
// bank_code): instead says what to give.
func NotTaken(member, instead string) Rule {
	return func(f fault.Fields, field, method string, params map[string]any) {
		if _, ok := params[member]; ok {
			f.Add(field+"."+member, fmt.Sprintf("is not taken by %s: %s", method, instead))
		}
	}
}
