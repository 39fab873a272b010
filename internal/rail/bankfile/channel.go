package bankfile

import (
	"context"

	"payd/internal/bankchannel"
)

// OpenChannel opens a rail's outbox through bankchannel: a dir:PATH, or an
// sftp:// server signed in to with the rail's key and checked against its
// known_hosts file.
func OpenChannel(ctx context.Context, url string, keys Keys) (Outbox, error) {
	return bankchannel.Open(ctx, url, bankchannel.Config{KeyFile: keys.SFTPKey, KnownHostsFile: keys.SFTPKnownHosts})
}

// Inbox is where a rail's bank leaves its answers: bankchannel's Endpoint,
// as the inbox reader uses it. List names the files waiting (not those
// filed away); Move files one away into processed/ or rejected/.
type Inbox interface {
	List(ctx context.Context) ([]string, error)
	Get(ctx context.Context, name string) ([]byte, error)
	Move(ctx context.Context, name string, folder bankchannel.Folder) error
	Close() error
}

// InboxOpener opens a rail's inbox (dir:PATH or sftp://…).
type InboxOpener func(ctx context.Context, url string, keys Keys) (Inbox, error)

// OpenInboxChannel opens a rail's inbox through bankchannel, as
// OpenChannel opens its outbox.
func OpenInboxChannel(ctx context.Context, url string, keys Keys) (Inbox, error) {
	return bankchannel.Open(ctx, url, bankchannel.Config{KeyFile: keys.SFTPKey, KnownHostsFile: keys.SFTPKnownHosts})
}
