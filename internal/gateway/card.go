package gateway

import (
	"context"
	"strconv"
	"strings"
	"time"

	"payd/internal/fault"
)

// Card is what a card form submits. The number and the CVC live only in
// this value for the length of one request: they are never stored, logged
// or echoed; a payment keeps only Brand and Last4.
type Card struct {
	Name   string
	Number string
	Expiry string // MM/YY
	CVC    string
}

// CheckedCard is a card that passed CheckCard.
type CheckedCard struct {
	Brand, Last4 string
	number       string
}

// Card brands by number prefix.
const (
	BrandVisa       = "visa"
	BrandMastercard = "mastercard"
	BrandAmex       = "amex"
)

// CheckCard validates a card form as the page's script does: the number
// (digits, with spaces or dashes allowed, Luhn, the brand's length), the
// expiry (MM/YY, not before now's month) and the CVC (3 digits, 4 for amex).
// Field names are the form's autocomplete tokens.
func CheckCard(c Card, now time.Time) (CheckedCard, error) {
	f := fault.Fields{}
	digits := strings.NewReplacer(" ", "", "-", "").Replace(c.Number)
	brand := ""
	switch {
	case len(digits) == 0:
		f.Add("cc-number", "is required")
	case len(digits) > 19 || !allDigits(digits):
		f.Add("cc-number", "must be 12 to 19 digits")
	default:
		brand = brandOf(digits)
		switch {
		case brand == "":
			f.Add("cc-number", "is not a Visa, Mastercard or American Express card")
		case !brandLength(brand, len(digits)):
			f.Add("cc-number", "has the wrong number of digits for "+brand)
		case !luhn(digits):
			f.Add("cc-number", "is not a valid card number (check the digits)")
		}
	}
	if len(c.Name) > 100 {
		f.Add("cc-name", "must be at most 100 characters")
	}
	if !expiryOK(c.Expiry, now) {
		f.Add("cc-exp", "must be a month not in the past, as MM/YY")
	}
	cvcLen := 3
	if brand == BrandAmex {
		cvcLen = 4
	}
	if len(c.CVC) != cvcLen || !allDigits(c.CVC) {
		f.Add("cc-csc", "must be "+strconv.Itoa(cvcLen)+" digits")
	}
	if err := f.Err(); err != nil {
		return CheckedCard{}, err
	}
	return CheckedCard{Brand: brand, Last4: digits[len(digits)-4:], number: digits}, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func brandOf(d string) string {
	switch {
	case d[0] == '4':
		return BrandVisa
	case strings.HasPrefix(d, "34"), strings.HasPrefix(d, "37"):
		return BrandAmex
	}
	if len(d) >= 4 {
		p2, _ := strconv.Atoi(d[:2])
		p4, _ := strconv.Atoi(d[:4])
		if (p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720) {
			return BrandMastercard
		}
	}
	return ""
}

func brandLength(brand string, n int) bool {
	switch brand {
	case BrandVisa:
		return n == 13 || n == 16 || n == 19
	case BrandAmex:
		return n == 15
	case BrandMastercard:
		return n == 16
	}
	return false
}

func luhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

func expiryOK(s string, now time.Time) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) != 5 || s[2] != '/' || !allDigits(s[:2]) || !allDigits(s[3:]) {
		return false
	}
	m, _ := strconv.Atoi(s[:2])
	y, _ := strconv.Atoi(s[3:])
	if m < 1 || m > 12 {
		return false
	}
	y += 2000
	ny, nm := now.Year(), int(now.Month())
	return y > ny || (y == ny && m >= nm)
}

// Outcome is a card network's answer to a charge.
type Outcome struct {
	Approved bool
	// Reason says why a charge was declined, in words for the customer.
	Reason string
	// DisputeAfter, on an approved charge of the sandbox's network, is when
	// (after now, on the merchant's clock) the network will send a dispute
	// notice of it: its self-disputing test card.
	DisputeAfter time.Duration
}

// Charge is what a card network is asked to take.
type Charge struct {
	// Reference is unique per attempt (payment id and attempt number), so a
	// network can refuse a repeat.
	Reference string
	Currency  string
	Amount    int64
	Card      CheckedCard
}

// CardNetwork takes card payments (internal/rail style: the sandbox has a
// simulation, a production deployment plugs in a real acquirer).
type CardNetwork interface {
	Authorize(ctx context.Context, c Charge) (Outcome, error)
}

// Sandbox test cards.
const (
	SandboxCardPays     = "4242424242424242"
	SandboxCardDeclines = "4000000000000002"
)

// SandboxCards is the sandbox's card network: 4000 0000 0000 0002 is
// declined, 4000 0000 0000 0259 approved and disputed a minute later, every
// other valid card is approved.
type SandboxCards struct{}

// Authorize answers a charge at once.
func (SandboxCards) Authorize(_ context.Context, c Charge) (Outcome, error) {
	switch c.Card.number {
	case SandboxCardDeclines:
		return Outcome{Reason: "The card was declined"}, nil
	case SandboxCardDisputes:
		return Outcome{Approved: true, DisputeAfter: sandboxDisputeDelay}, nil
	}
	return Outcome{Approved: true}, nil
}

// NoCards is a deployment without a card acquirer: every card is refused.
type NoCards struct{}

// Authorize refuses.
func (NoCards) Authorize(context.Context, Charge) (Outcome, error) {
	return Outcome{}, fault.Rule(CodeCardsUnavailable, "card payments are not configured on this deployment")
}
