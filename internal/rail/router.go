package rail

import (
	"context"

	"payd/internal/payfile"
	"payd/internal/store"
)

// FileFormats answers which bank-file format, if any, a transfer of
// (currency, method) goes out in: the question the rules that depend on the
// file ask (a name outside the BECS set is refused at payout creation when
// an aba rail serves the method; a Zengin reference is ten digits). method
// is a payout method's code or Transfer.Method ("settlement", "transfer").
type FileFormats interface {
	// FileFormat is the format of the rail that serves (currency, method),
	// or "" when no bank-file rail does. What it reads it reads through q:
	// the caller's transaction, when it has one (a read of the pool while
	// holding one of its connections can wait for ever under load).
	FileFormat(ctx context.Context, q store.Querier, currency, method string) (payfile.Format, error)
}

// FileRail is the bank-file rail as the router sees it: a rail, and which
// transfers it serves.
type FileRail interface {
	Rail
	FileFormats
}

// Router is the rail of a deployment that has bank-file rails: a transfer
// whose (currency, method) a rail in the database serves goes to the
// bank-file rail, every other to Other (the sandbox network in a sandbox,
// None in production), which then behaves exactly as it did without any
// bank-file rail (CONTRACT §17: "a method with no rail behaves as today").
type Router struct {
	files FileRail
	other Rail
}

// NewRouter returns the router of files and other.
func NewRouter(files FileRail, other Rail) *Router { return &Router{files: files, other: other} }

// Submit hands t to the rail that serves it.
func (r *Router) Submit(ctx context.Context, tx *store.Tx, t Transfer) error {
	format, err := r.files.FileFormat(ctx, tx, t.Currency, t.Method)
	if err != nil {
		return err
	}
	if format != "" {
		return r.files.Submit(ctx, tx, t)
	}
	return r.other.Submit(ctx, tx, t)
}

// Listen sets the handler on both rails: a transfer's outcome comes from
// the rail it went to.
func (r *Router) Listen(prefix string, h OutcomeHandler) {
	r.files.Listen(prefix, h)
	r.other.Listen(prefix, h)
}

// FileFormat is the bank-file rail's answer.
func (r *Router) FileFormat(ctx context.Context, q store.Querier, currency, method string) (payfile.Format, error) {
	return r.files.FileFormat(ctx, q, currency, method)
}

// FileFormatOf is the format r's transfers of (currency, method) go out in,
// or "" when r writes no files (the sandbox network, None) or no bank-file
// rail serves them.
func FileFormatOf(ctx context.Context, q store.Querier, r Rail, currency, method string) (payfile.Format, error) {
	ff, ok := r.(FileFormats)
	if !ok {
		return "", nil
	}
	return ff.FileFormat(ctx, q, currency, method)
}

// Handed reports whether merchantID's transfer of key was handed to a
// network (the sandbox's, or a bank-file rail): its outcome then comes from
// that network, never from a sandbox simulate endpoint.
func Handed(ctx context.Context, q store.Querier, merchantID, key string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM rail_submissions WHERE merchant_id = $1 AND key = $2`, merchantID, key).Scan(&n)
	return n > 0, err
}
