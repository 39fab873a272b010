package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"
)

// Secret returns the server-wide secret called name (for signing links),
// creating it on first use. Every node of a deployment reads the same one.
func (db *DB) Secret(ctx context.Context, name string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	err := db.Exec(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
			name, base64.StdEncoding.EncodeToString(b), time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	var value string
	if err := db.read.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&value); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return base64.StdEncoding.DecodeString(value)
}
