package feed

import (
	"context"
	"hash/fnv"

	"payd/internal/ledger"
	"payd/internal/statement"
	"payd/internal/store"
)

// route is the lock domain of an entry's match, read before it is applied
// (on the reader, outside any transaction): the ledger lane of the payin
// it names (a merchant's slot, whose balance rows a receipt locks), the
// merchant of its PayID or treasury account, the transfer or file its
// debit or return names, or none (an exception, which locks nothing of a
// merchant's). The entries of one route go to one worker, so that the
// records a chunk of one worker locks are never locked by another's
// chunk. The match inside the transaction reads again and decides; a
// route that has become wrong since (a payin paid in between) costs only
// a wait, never a wrong application.
type route string

// worker is the worker of r among n; an entry of no route goes by its
// place in the file.
func (r route) worker(e statement.Entry, n int) int {
	if r == "" {
		return e.Index % n
	}
	h := fnv.New32a()
	h.Write([]byte(r))
	return int(h.Sum32() % uint32(n))
}

// route finds e's route as match would find its record (match.go), on the
// reader.
func (s *Service) route(ctx context.Context, e statement.Entry) (route, error) {
	switch {
	case e.Return && e.ReturnedReference != "":
		return route("transfer:" + e.ReturnedReference), nil
	case e.Return || e.Direction == statement.Debit:
		return route("transfer:" + e.Reference), nil
	}
	q := s.DB.Read()
	t := tokensOf(e)
	payins, err := payinCandidates(ctx, q, t)
	if err != nil {
		return "", err
	}
	if len(payins) > 0 {
		return route(ledger.Lane(payins[0].MerchantID, payins[0].UUID)), nil
	}
	ids, err := payidCandidates(ctx, q, t)
	if err != nil {
		return "", err
	}
	if len(ids) > 0 {
		return route(store.MerchantLane(ownerOf(ctx, q, ids[0]))), nil
	}
	accounts, err := treasuryCandidates(ctx, q, t, e.Currency)
	if err != nil || len(accounts) == 0 {
		return "", err
	}
	return route(store.MerchantLane(accounts[0].merchantID)), nil
}
