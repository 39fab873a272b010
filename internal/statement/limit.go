package statement

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"payd/internal/money"
)

// The bounds every reader keeps (TIGER_STYLE: a limit on everything). A file
// beyond one is refused whole with ErrLimit.
const (
	// HardMaxBytes is the largest file any reader takes, whatever the
	// caller configures: a 50,000-entry camt.053 is about 60 MB. A caller's
	// own bound (the feed's configured size) is LimitReader's.
	HardMaxBytes = 256 << 20
	// MaxEntries is the most entries one file may hold.
	MaxEntries = 1_000_000
	// MaxReferenceRunes bounds a reference or key (camt's are Max35Text,
	// MT940's 16x; BAI2 leaves its own unbounded but discourages more than 76).
	MaxReferenceRunes = 140
	// MaxNameRunes bounds a name or an account (camt Nm is Max140Text).
	MaxNameRunes = 140
	// MaxTextRunes bounds an entry's remittance text (camt Ustrd lines are
	// Max140Text each, MT940 :86: is 6*65x, a BAI2 text ends its record).
	MaxTextRunes = 4096
	// MaxSumMinor bounds the sums a reader adds (of up to MaxEntries
	// amounts of at most money.MaxMinor each), far above any real account's
	// turnover, so that no sum overflows an int64.
	MaxSumMinor int64 = 1 << 62
)

// LimitReader is r cut at maxBytes: reading more fails with an error
// wrapping ErrLimit that names the bound, where io.LimitReader would end the
// file early and let a truncated file look whole. A maxBytes above
// HardMaxBytes is HardMaxBytes. Every reader wraps its input in one; the
// feed wraps the file in its configured bound as well.
func LimitReader(r io.Reader, maxBytes int64) io.Reader {
	if maxBytes > HardMaxBytes || maxBytes <= 0 {
		maxBytes = HardMaxBytes
	}
	return &limitedReader{r: r, left: maxBytes, max: maxBytes}
}

type limitedReader struct {
	r         io.Reader
	left, max int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.tooLarge()
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), l.tooLarge()
	}
	return n, err
}

func (l *limitedReader) tooLarge() error {
	return fmt.Errorf("the file is larger than %d bytes: %w", l.max, ErrLimit)
}

// ParseAmount reads a non-negative decimal as the formats write it once
// their own punctuation is undone ("1250.5", "1250", "0.05") in c's minor
// units, by the API's rule for amounts (CONTRACT §3, §18, §25): in the
// rounding currencies (VND, JPY, XAF, KRW, XOF) more decimals than c has
// are rounded half away from zero, as simulate rounds a credit; in every
// other currency they are refused (wrapping money.ErrTooPrecise). So is
// an amount above money.MaxMinor. Trailing zeros are not extra precision:
// 10.500 AUD is 1050.
func ParseAmount(text string, c money.Currency) (int64, error) {
	if !decimalText(text) {
		return 0, fmt.Errorf("amount %q is not a decimal number", text)
	}
	minor, _, err := money.Parse(text, c)
	if errors.Is(err, money.ErrTooPrecise) {
		return 0, fmt.Errorf("amount %s: %w: %s has %d", text, money.ErrTooPrecise, c.Code, c.Digits)
	}
	if err != nil {
		return 0, fmt.Errorf("amount %s: %w", text, err)
	}
	return minor, nil
}

// decimalText reports whether s is digits, optionally a point and digits,
// at most 40 bytes.
func decimalText(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	digits, point := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] >= '0' && s[i] <= '9':
			digits++
		case s[i] == '.' && !point && digits > 0 && i < len(s)-1:
			point = true
		default:
			return false
		}
	}
	return digits > 0
}

// Currency looks up a report's currency, refusing one payd does not hold.
func Currency(code string) (money.Currency, error) {
	c, err := money.Lookup(code)
	if err != nil {
		return money.Currency{}, fmt.Errorf("currency %q: not one payd holds", code)
	}
	return c, nil
}

// TextError says why s cannot be the text called name of a report, of at
// most maxRunes characters, or nil when it can: it must be UTF-8 without
// control characters other than tab, CR and LF; a longer one wraps ErrLimit.
func TextError(name, s string, maxRunes int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("the %s is not UTF-8 text", name)
	}
	n := 0
	for _, r := range s {
		n++
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			return fmt.Errorf("the %s holds the control character %U", name, r)
		}
	}
	if n > maxRunes {
		return fmt.Errorf("the %s has %d characters, more than %d: %w", name, n, maxRunes, ErrLimit)
	}
	return nil
}

// CheckEntryText checks the texts of e against the bounds, naming the first
// that is beyond them.
func CheckEntryText(e Entry) error {
	fields := []struct {
		name     string
		value    string
		maxRunes int
	}{
		{"key", e.Key, MaxReferenceRunes},
		{"reference", e.Reference, MaxReferenceRunes},
		{"returned reference", e.ReturnedReference, MaxReferenceRunes},
		{"bank transaction code", e.BankTransactionCode, MaxReferenceRunes},
		{"remittance", e.Remittance, MaxTextRunes},
		{"counterparty name", e.CounterpartyName, MaxNameRunes},
		{"counterparty account", e.CounterpartyAccount, MaxNameRunes},
		{"credited account", e.CreditedAccount, MaxNameRunes},
		{"credited proxy", e.CreditedProxy, maxProxyRunes},
		{"return reason", e.ReturnReason, MaxTextRunes},
	}
	for _, f := range fields {
		if err := TextError(f.name, f.value, f.maxRunes); err != nil {
			return err
		}
	}
	return nil
}

// maxProxyRunes is camt Prxy/Id's Max2048Text.
const maxProxyRunes = 2048

// Totals adds up a report's entries as its Header counts them, within the
// bounds: at most MaxEntries entries, sums within MaxSumMinor.
type Totals struct {
	Entries, Booked           int
	CreditsMinor, DebitsMinor int64
}

// Add counts e.
func (t *Totals) Add(e Entry) error {
	if t.Entries >= MaxEntries {
		return fmt.Errorf("more than %d entries: %w", MaxEntries, ErrLimit)
	}
	if e.AmountMinor < 0 || e.AmountMinor > money.MaxMinor {
		return fmt.Errorf("amount %d minor units: %w", e.AmountMinor, money.ErrOutOfRange)
	}
	t.Entries++
	if e.Status != Booked {
		return nil
	}
	t.Booked++
	sum := &t.CreditsMinor
	if e.Direction == Debit {
		sum = &t.DebitsMinor
	}
	if *sum > MaxSumMinor-e.AmountMinor {
		return fmt.Errorf("the %ss sum to more than %d minor units: %w", e.Direction, MaxSumMinor, ErrLimit)
	}
	*sum += e.AmountMinor
	return nil
}

// NetMinor is the booked credits less the booked debits.
func (t Totals) NetMinor() int64 { return t.CreditsMinor - t.DebitsMinor }

// AddSigned is a + b, refused when its magnitude would pass MaxSumMinor: the
// readers' control sums (a balance plus the day's net, BAI2's algebraic
// totals) are added with it.
func AddSigned(a, b int64) (int64, error) {
	sum := a + b
	if (b > 0 && sum < a) || (b < 0 && sum > a) || sum > MaxSumMinor || sum < -MaxSumMinor {
		return 0, fmt.Errorf("a sum beyond %d minor units: %w", MaxSumMinor, ErrLimit)
	}
	return sum, nil
}
