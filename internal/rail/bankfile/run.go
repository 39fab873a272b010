package bankfile

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Poll is how often Run looks for cut-offs due and files to deliver.
const Poll = time.Second

// Run makes every rail's cut-offs when they are due and delivers the
// written files, every Poll until ctx ends (payd serve runs it), and reads
// the rails' inboxes at its start and then every InboxPoll (PollInboxes).
// Another process's round on the same rail, or poll of the same inbox, is
// left to it. Unset rails are still cut and delivered while anything of
// theirs waits, and their inboxes read.
func (f *Files) Run(ctx context.Context) {
	tick := time.NewTicker(Poll)
	defer tick.Stop()
	var polledAt time.Time // on the machine's clock: InboxPoll is real time
	for {
		if err := f.Round(ctx); err != nil && ctx.Err() == nil {
			f.Log.Warn("bank-file rail", "err", err)
		}
		if now := f.machine.Now(); polledAt.IsZero() || now.Sub(polledAt) >= f.InboxPoll {
			polledAt = now
			if err := f.PollInboxes(ctx); err != nil && ctx.Err() == nil {
				f.Log.Warn("bank-file inbox", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Round is one of Run's rounds: the cut-offs due by now, then the
// deliveries due.
func (f *Files) Round(ctx context.Context) error {
	now, readAt := f.Clock.Now(), f.machine.Now()
	rails, err := readRails(ctx, f.DB.Read(), true)
	if err != nil {
		return err
	}
	f.remember(rails, readAt)
	var errs []error
	for _, r := range rails {
		if r.NextCutoff().After(now) {
			continue
		}
		made, err := f.cutDue(ctx, r.Name, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("cut-off of rail %s: %w", r.Name, err))
		}
		for _, name := range made {
			f.Log.Info("bank file written", "file", name, "rail", r.Name)
		}
	}
	if _, err := f.deliverDue(ctx, now); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Waiting counts the transfers waiting for a cut-off, on every rail
// (payd_bankfile_transfers_waiting).
func (f *Files) Waiting(ctx context.Context) (int64, error) {
	var n int64
	// spans merchants: the gauge counts every merchant's waiting transfers.
	err := f.DB.Read().QueryRowContext(ctx, `SELECT count(*) FROM rail_submissions WHERE waiting`).Scan(&n)
	return n, err
}

// LastDelivery is when a bank file was last delivered, on any rail, as
// Unix seconds; 0 when none ever was
// (payd_bankfile_last_delivery_timestamp_seconds).
func (f *Files) LastDelivery(ctx context.Context) (float64, error) {
	var ms *int64
	// global lookup: bank_files are operator records, no merchant's.
	if err := f.DB.Read().QueryRowContext(ctx, `SELECT max(delivered_at) FROM bank_files`).Scan(&ms); err != nil || ms == nil {
		return 0, err
	}
	return float64(*ms) / 1000, nil
}
