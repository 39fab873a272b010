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

// Outcome is a rail's final word on a transfer.
type Outcome struct {
	Key        string
	MerchantID string
	// Done is true when the money reached the recipient; otherwise Reason
	// says why it did not.
	Done   bool
	Reason string
}

// OutcomeHandler applies an outcome in tx: the payout engine registers one.
type OutcomeHandler func(ctx context.Context, tx *store.Tx, o Outcome) error

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
