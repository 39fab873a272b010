package payin

import (
	"context"
	"fmt"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// The hosted payment page (package web) reaches payins by uuid and the
// pay_url's token, not by merchant credentials.

// Hosted returns the payin behind a pay_url; a wrong token answers as not found.
func (s *Service) Hosted(ctx context.Context, uuid, token string) (Payin, error) {
	if !s.ValidPayToken(uuid, token) {
		return Payin{}, notFound(uuid)
	}
	r, err := s.getAny(ctx, s.db.Read(), uuid, readOnly)
	if err != nil {
		return Payin{}, err
	}
	return r.view(), nil
}

// PayHosted is the sandbox page's pay ("completed") or fail ("failed")
// button: the same transition as POST /v2/payins/simulate.
func (s *Service) PayHosted(ctx context.Context, uuid, token, outcome string) (Payin, error) {
	if !s.ValidPayToken(uuid, token) {
		return Payin{}, notFound(uuid)
	}
	if outcome != "completed" && outcome != "failed" {
		return Payin{}, fault.Field("outcome", "must be completed or failed")
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (Payin, error) {
		r, err := s.getAny(ctx, tx, uuid, lockPayin)
		if err != nil {
			return Payin{}, err
		}
		now, err := s.clock.Read(ctx, tx, r.merchantID)
		if err != nil {
			return Payin{}, err
		}
		if err := s.complete(ctx, tx, &r, outcome, r.total, now); err != nil {
			return Payin{}, err
		}
		return r.view(), nil
	})
}

// getAny reads a payin by uuid alone (for token-authorised pages and jobs).
func (s *Service) getAny(ctx context.Context, q store.Querier, uuid string, l lock) (row, error) {
	merchantID, err := store.KeyOwner(ctx, q, store.KeyPayin, uuid)
	if err != nil {
		if isNoRows(err) {
			return row{}, notFound(uuid)
		}
		return row{}, err
	}
	return s.get(ctx, q, merchantID, uuid, l)
}

// Payee is who a hosted payin pays, as its page names them: the merchant's
// name and time zone (the page's deadline is in it).
type Payee struct {
	Name string
	Zone *time.Location
}

// HostedPayee is the payee of the payin behind a pay_url; a wrong token
// answers as not found.
func (s *Service) HostedPayee(ctx context.Context, uuid, token string) (Payee, error) {
	if !s.ValidPayToken(uuid, token) {
		return Payee{}, notFound(uuid)
	}
	q := s.db.Read()
	merchantID, err := store.KeyOwner(ctx, q, store.KeyPayin, uuid)
	if isNoRows(err) {
		return Payee{}, notFound(uuid)
	}
	if err != nil {
		return Payee{}, err
	}
	var name, zone string
	if err := q.QueryRowContext(ctx, `SELECT name, timezone FROM merchants WHERE id = $1`, merchantID).Scan(&name, &zone); err != nil {
		return Payee{}, fmt.Errorf("payee of payin %s: %w", uuid, err)
	}
	return Payee{Name: name, Zone: merchant.Location(zone)}, nil
}
