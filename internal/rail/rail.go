// Package rail is the seam between payd and the payment networks money leaves
// through: a bank's payment file, NPP, a mobile-money operator. A rail takes
// transfers and reports each one's outcome; the payout engine does the rest
// (state, ledger, webhooks). The sandbox rail (Sandbox) stands in for the
// networks and behaves as CONTRACT §5 says.
package rail

import (
	"context"
	"fmt"
	"time"

	"payd/internal/store"
)

// Transfer is one payment to one recipient.
type Transfer struct {
	// Key identifies the transfer for good: a rail must treat a second Submit
	// with the same Key as the first (never pay twice).
	Key        string
	MerchantID string
	// Method is the payout method's code (au_bank_aud, …); Params its
	// recipient details (bsb, account_number, pay_id, …).
	Method      string
	Currency    string
	AmountMinor int64
	Params      map[string]any
	// At is the time on the merchant's clock the transfer is handed over.
	At time.Time
	// BankReference names the transfer to the bank and in what the bank
	// reports of it (CONTRACT §17, §25), drawn by DrawReference.
	BankReference string
	// Payee is the recipient's name where Params has no account_name (a
	// PayID's owner, as the payout names them).
	Payee string
	// Description is what the recipient's statement shows of the payment
	// (a payout's description, a transfer's).
	Description string
}

// The methods of the transfers that are no payout's: Transfer.Method of a
// settlement to a bank account and of an external transfer. A rail names
// them in the plural (RailMethod).
const (
	SettlementMethod = "settlement"
	TransferMethod   = "transfer"
)

// RailMethod is the name a rail serves a transfer's method by (CONTRACT
// §25): a payout method's code, settlements (the merchant's settlements in
// the rail's currency) or transfers (its external transfers).
func RailMethod(method string) string {
	switch method {
	case SettlementMethod:
		return "settlements"
	case TransferMethod:
		return "transfers"
	}
	return method
}

// Verdict is what the bank's evidence says of a transfer (CONTRACT §25's
// outcome order): it was paid, it was refused, or, paid, it came back.
type Verdict string

const (
	// Done: the money reached the recipient (ACSC/ACCC, a booked debit of
	// the transfer's reference or of its file's).
	Done Verdict = "done"
	// Failed: the money never left (RJCT at any level, a format's refusal).
	Failed Verdict = "failed"
	// Returned: the money left and came back (a return naming the
	// reference).
	Returned Verdict = "returned"
)

// Outcome is a rail's word on a transfer.
type Outcome struct {
	Key        string
	MerchantID string
	Verdict    Verdict
	// Reason says why a transfer failed or was returned: its
	// failure_reason.
	Reason string
}

// State is where a transfer stands in the outcome order, whatever its
// record calls it (a payout transaction's pending, a settlement's
// processing).
type State string

const (
	StatePending  State = "pending"
	StateDone     State = "done"
	StateFailed   State = "failed"
	StateReturned State = "returned"
)

// Effect is what an outcome did to its transfer.
type Effect string

const (
	// Changed: the transfer moved (pending to done or failed, done to
	// returned).
	Changed Effect = "changed"
	// Same: the transfer was so already; nothing changed.
	Same Effect = "same"
	// Contrary: the transfer stands where the outcome cannot take it (a
	// failure of a done transfer, a return of a pending one); nothing
	// changed, and the operator is told (an exception of kind
	// state_mismatch).
	Contrary Effect = "contrary"
)

// Judge is the outcome order of CONTRACT §25, the one place it is kept: a
// transfer moves pending to done or failed, and done to returned; the first
// evidence wins; the same outcome again changes nothing, and any other is
// contrary.
func Judge(from State, v Verdict) Effect {
	switch {
	case string(from) == string(v):
		return Same
	case from == StatePending && (v == Done || v == Failed), from == StateDone && v == Returned:
		return Changed
	}
	return Contrary
}

// Applied is how an outcome met its transfer: its effect, and the status
// of the transfer's record before and after it, in the record's own words
// (a payout transaction's pending and done, a settlement's processing and
// completed).
type Applied struct {
	Effect      Effect
	Was, Status string
}

// OutcomeHandler applies an outcome in tx, once: the payout engine,
// settlements and transfers each register one. An outcome that is not
// Changed (Judge) changes nothing.
type OutcomeHandler func(ctx context.Context, tx *store.Tx, o Outcome) (Applied, error)

// Rail submits transfers and reports their outcomes to the handler given to
// Listen.
type Rail interface {
	// Submit hands t to the network. It is called inside the transaction that
	// records the submission, so that a transfer is submitted once with the
	// state change that says so; the transaction may still roll back after
	// Submit returns (a crash, say), and the submission is then made again
	// with the same Key, which a network rail must deduplicate.
	Submit(ctx context.Context, tx *store.Tx, t Transfer) error
	// Listen sets where the outcomes of transfers whose Key begins with
	// prefix go (the longest prefix wins; "" takes the rest). Each domain
	// that submits transfers listens once, before its first Submit.
	Listen(prefix string, h OutcomeHandler)
}

// None is the rail of a production deployment that has no payment network
// configured: it refuses every submission, so payouts wait in processing
// (funds in outgoing, the submission job retrying) rather than pretend that
// money left.
type None struct{}

// Submit refuses t.
func (None) Submit(ctx context.Context, tx *store.Tx, t Transfer) error {
	return fmt.Errorf("submit %s: no payment network is configured for %s", t.Key, t.Method)
}

// Listen does nothing: no outcome ever comes.
func (None) Listen(string, OutcomeHandler) {}
