package bankfile

import (
	"context"

	"payd/internal/bankchannel"
	inboxes "payd/internal/inbox"
)

// OpenChannel opens a rail's outbox through bankchannel: a dir:PATH, or an
// sftp:// server signed in to with the rail's key and checked against its
// known_hosts file.
func OpenChannel(ctx context.Context, url string, keys Keys) (Outbox, error) {
	return bankchannel.Open(ctx, url, bankchannel.Config{KeyFile: keys.SFTPKey, KnownHostsFile: keys.SFTPKnownHosts})
}

// Inbox is where a rail's bank leaves its answers (package inbox's Box,
// which the bank feeds read too).
type Inbox = inboxes.Box

// InboxOpener opens a rail's inbox (dir:PATH or sftp://…).
type InboxOpener func(ctx context.Context, url string, keys Keys) (Inbox, error)

// OpenInboxChannel opens a rail's inbox through bankchannel, as
// OpenChannel opens its outbox.
func OpenInboxChannel(ctx context.Context, url string, keys Keys) (Inbox, error) {
	return bankchannel.Open(ctx, url, bankchannel.Config{KeyFile: keys.SFTPKey, KnownHostsFile: keys.SFTPKnownHosts})
}
