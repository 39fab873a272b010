package statement

import (
	"errors"
	"fmt"
)

// The kinds of refusal a caller tells apart with errors.Is. Every refusal is
// a *Error; these are what it wraps.
var (
	// ErrUnknownFormat means the content is none of the formats payd reads
	// (CONTRACT §25: a reconciliation upload answers 415).
	ErrUnknownFormat = errors.New("not a bank report payd reads")
	// ErrTotals means a control total disagrees with the entries (CONTRACT
	// §18): the file is refused whole and Error.Check names the check.
	ErrTotals = errors.New("control totals disagree")
	// ErrLimit means the file is beyond one of payd's bounds: its size, its
	// number of entries, the length of a text, a sum too large to be real.
	ErrLimit = errors.New("beyond payd's bounds")
)

// Error is the refusal of a whole bank file: which format, where in the
// file, and why. The feed turns it into its log line and the move to
// rejected/; a reconciliation upload into 422 naming file (CONTRACT §25).
type Error struct {
	Format Format
	// At is where the problem is, as the format counts: "line 12",
	// "Stmt STMT-1 Ntry 3", "message 2 :61: (line 9)"; "" for the whole file.
	At string
	// Check names the control total that failed (ErrTotals): "opening +
	// credits - debits = closing", "TxsSummry/TtlCdtNtries/Sum",
	// "49 account control total", …; "" for any other refusal.
	Check string
	Err   error
}

func (e *Error) Error() string {
	where := "bank file"
	if e.Format != "" {
		where = e.Format.String()
	}
	if e.At != "" {
		where += " " + e.At
	}
	if e.Check != "" {
		return fmt.Sprintf("%s: check %q failed: %v", where, e.Check, e.Err)
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf is a refusal of format at where, its reason formatted as fmt.Errorf
// does (so that %w wraps).
func Errorf(format Format, at, reason string, args ...any) *Error {
	return &Error{Format: format, At: at, Err: fmt.Errorf(reason, args...)}
}

// TotalsError is the refusal of a file whose control total check fails:
// detail says what disagrees ("the credits sum to 1250.50, TxsSummry says
// 1250.00"); the error wraps ErrTotals.
func TotalsError(format Format, at, check, detail string, args ...any) *Error {
	return &Error{Format: format, At: at, Check: check, Err: fmt.Errorf("%s: %w", fmt.Sprintf(detail, args...), ErrTotals)}
}
