package money

import (
	"errors"
	"strconv"

	"payd/internal/fault"
)

// Amount limits every request must respect before any method-specific limit.
const minPositive = 1

// ParseField parses the amount member name of a request in currency c and
// turns every problem into a validation error naming the member. The amount
// must be positive. rounded reports that a rounding currency (VND, JPY, XAF,
// KRW, XOF) changed the submitted amount.
func ParseField(name string, in Input, c Currency) (minor int64, rounded bool, err error) {
	if in.IsZero() {
		return 0, false, fault.Field(name, "is required")
	}
	minor, rounded, err = Parse(string(in), c)
	if err != nil {
		return 0, false, fieldError(name, err, c)
	}
	if minor < minPositive {
		return 0, false, fault.Field(name, "must be greater than zero")
	}
	return minor, rounded, nil
}

// ParseWholeField is ParseField for amounts given in whole units of the currency.
func ParseWholeField(name string, in Input, c Currency) (int64, error) {
	if in.IsZero() {
		return 0, fault.Field(name, "is required")
	}
	minor, err := ParseWholeUnits(string(in), c)
	if err != nil {
		return 0, fieldError(name, err, c)
	}
	if minor < minPositive {
		return 0, fault.Field(name, "must be greater than zero")
	}
	return minor, nil
}

func fieldError(name string, err error, c Currency) error {
	switch {
	case errors.Is(err, ErrTooPrecise):
		return fault.Field(name, "has more decimal places than "+c.Code+" allows ("+strconv.Itoa(c.Digits)+")")
	case errors.Is(err, ErrNotWhole):
		return fault.Field(name, "must be a whole number of "+c.Code)
	case errors.Is(err, ErrOutOfRange):
		e := fault.Field(name, "is out of range")
		e.Code = fault.CodeAmountOutOfRange
		return e
	default:
		return fault.Field(name, "must be a decimal number such as 100.50")
	}
}
