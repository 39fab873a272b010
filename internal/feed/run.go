package feed

import (
	"context"
	"time"

	"payd/internal/bankchannel"
	"payd/internal/inbox"
)

// Opener opens a feed's inbox, whose files may have at most maxBytes.
type Opener func(ctx context.Context, f Feed, maxBytes int64) (inbox.Box, error)

// OpenInbox opens a feed's inbox through bankchannel: a dir:PATH, or an
// sftp:// server signed in to with the feed's key and checked against its
// known_hosts file (the same client as the bank-file rails').
func OpenInbox(ctx context.Context, f Feed, maxBytes int64) (inbox.Box, error) {
	return bankchannel.Open(ctx, f.Inbox, bankchannel.Config{KeyFile: f.SFTPKey, KnownHostsFile: f.SFTPKnownHosts, MaxFileBytes: maxBytes})
}

// Run reads every feed's inbox at its start and then every PollEvery until ctx
// ends (payd serve runs it).
func (s *Service) Run(ctx context.Context) {
	tick := time.NewTicker(s.PollEvery)
	defer tick.Stop()
	for {
		if err := s.Poll(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("bank feed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Poll reads every feed's inbox once, one goroutine of the process at a
// time.
func (s *Service) Poll(ctx context.Context) error {
	s.polling.Lock()
	defer s.polling.Unlock()
	return s.poll(ctx)
}
