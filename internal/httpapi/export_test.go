package httpapi

import (
	"context"

	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/store"
)

// The v1 payout body, for the tests of package httpapi_test, which run it
// through the services (servertest) as POST /v1/payouts does.
type (
	PayoutV1Request     = payoutV1Request
	PayoutV1Transaction = payoutV1Transaction
)

// CreatePayoutV1 is POST /v1/payouts's call, without HTTP.
func (a *API) CreatePayoutV1(ctx context.Context, tx *store.Tx, p merchant.Principal, r PayoutV1Request) (payout.V1Payout, error) {
	return a.createPayoutV1(ctx, tx, p, r)
}
