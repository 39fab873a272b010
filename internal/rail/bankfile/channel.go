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
