package report

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// A report's file_url is a pre-signed link (DESIGN: Security): fetched with
// a plain GET and no headers, it proves itself by an HMAC-SHA256 over the
// merchant, the report and the expiry, made with a server key that every
// process reads from the database. A link is valid for LinkTTL on the
// merchant's clock. Keys are rotated by an operator (payd report
// rotate-key): the newest key signs; a retired key still verifies for
// LinkTTL after its retirement, which is as long as any link it signed can
// live, and never again.

// LinkTTL is how long a signed file link is valid (CONTRACT §12: 3 minutes).
const LinkTTL = 3 * time.Minute

// FilePath is the API path that serves report files, under {public_url}/api.
const FilePath = "/v2/reports/files"

// ErrLink answers every link that is not valid — altered, expired, signed by
// a key long retired, or naming an unknown report or another merchant's —
// all alike, so that a link reveals nothing about what it does not grant.
var ErrLink = fault.New(fault.Forbidden, CodeLinkInvalid,
	"this report link is altered or has expired: list the reports (GET /v2/reports/settlements) for a fresh one")

// CodeLinkInvalid is the error code of a refused report link.
const CodeLinkInvalid = "LINK_INVALID"

// keyBytes is the length of a signing key.
const keyBytes = 32

// signingKey is one key of report_signing_keys.
type signingKey struct {
	id        string
	secret    []byte
	createdAt time.Time
	retiredAt time.Time // zero while it signs
}

// KeyRotation is what payd report rotate-key prints.
type KeyRotation struct {
	KeyID     string     `json:"key_id"`
	CreatedAt clock.Time `json:"created_at"`
	// Retired are the keys the new one replaces: they verify the links
	// they signed until those expire.
	Retired []string `json:"retired"`
}

// newSecret is a fresh random key, base64 as stored.
func newSecret() (string, error) {
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("report signing key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// ensureKey adds the first signing key when there is none. Two processes
// starting at once may each add one; both then sign and verify.
func ensureKey(ctx context.Context, db *store.DB, now time.Time) error {
	secret, err := newSecret()
	if err != nil {
		return err
	}
	return db.Exec(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO report_signing_keys (id, secret, created_at)
			SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM report_signing_keys WHERE retired_at IS NULL)`,
			store.RandomID(store.UUIDLen), secret, now.UnixMilli())
		if err != nil {
			return fmt.Errorf("report signing key: %w", err)
		}
		return nil
	})
}

// RotateKey adds a new signing key at now (the deployment's time) and
// retires the ones that signed until then.
func RotateKey(ctx context.Context, db *store.DB, now time.Time) (KeyRotation, error) {
	secret, err := newSecret()
	if err != nil {
		return KeyRotation{}, err
	}
	return store.Do(ctx, db, func(tx *store.Tx) (KeyRotation, error) {
		out := KeyRotation{CreatedAt: clock.Time{T: now.UTC().Truncate(time.Millisecond)}, Retired: []string{}}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM report_signing_keys WHERE retired_at IS NULL ORDER BY id`+tx.DB().ForUpdate())
		if err != nil {
			return KeyRotation{}, fmt.Errorf("rotate report signing key: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return KeyRotation{}, fmt.Errorf("rotate report signing key: %w", err)
			}
			out.Retired = append(out.Retired, id)
		}
		rows.Close()
		if _, err := tx.ExecContext(ctx, `UPDATE report_signing_keys SET retired_at = $1 WHERE retired_at IS NULL`, now.UnixMilli()); err != nil {
			return KeyRotation{}, fmt.Errorf("rotate report signing key: %w", err)
		}
		out.KeyID, err = store.InsertWithID(ctx, store.UUIDLen, func(id string) (bool, error) {
			return store.OneRow(tx.ExecContext(ctx, `INSERT INTO report_signing_keys (id, secret, created_at) VALUES ($1, $2, $3)
				ON CONFLICT (id) DO NOTHING`, id, secret, now.UnixMilli()))
		})
		if err != nil {
			return KeyRotation{}, fmt.Errorf("rotate report signing key: %w", err)
		}
		return out, nil
	})
}

// currentKey is the key that signs now: the newest not retired.
func currentKey(ctx context.Context, q store.Querier) (signingKey, error) {
	k, err := scanKey(q.QueryRowContext(ctx, `SELECT id, secret, created_at, retired_at FROM report_signing_keys
		WHERE retired_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1`))
	if err != nil {
		return signingKey{}, fmt.Errorf("report signing key: %w", err)
	}
	return k, nil
}

// keyByID is the key a link names.
func keyByID(ctx context.Context, q store.Querier, id string) (signingKey, error) {
	return scanKey(q.QueryRowContext(ctx, `SELECT id, secret, created_at, retired_at FROM report_signing_keys WHERE id = $1`, id))
}

func scanKey(row store.Row) (signingKey, error) {
	var (
		k       signingKey
		secret  string
		created int64
		retired sql.NullInt64
	)
	if err := row.Scan(&k.id, &secret, &created, &retired); err != nil {
		return signingKey{}, err
	}
	b, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return signingKey{}, fmt.Errorf("report signing key %s: %w", k.id, err)
	}
	k.secret, k.createdAt = b, time.UnixMilli(created).UTC()
	if retired.Valid {
		k.retiredAt = time.UnixMilli(retired.Int64).UTC()
	}
	return k, nil
}

// verifies reports whether k may still verify links at the deployment's
// time now: always while it signs, for LinkTTL after it is retired.
func (k signingKey) verifies(now time.Time) bool {
	return k.retiredAt.IsZero() || !now.After(k.retiredAt.Add(LinkTTL))
}

// mac is the signature of a link: HMAC-SHA256 over the merchant, the
// report, the expiry (unix milliseconds) and the key's id.
func (k signingKey) mac(merchantID, reportID string, expiresMS int64) []byte {
	m := hmac.New(sha256.New, k.secret)
	fmt.Fprintf(m, "payd report link v1\n%s\n%s\n%d\n%s", merchantID, reportID, expiresMS, k.id)
	return m.Sum(nil)
}

// link is the query of a signed link.
type link struct {
	reportID, merchantID, keyID string
	expiresMS                   int64
	signature                   []byte
}

// sign returns the file URL of a report, valid until expires.
func sign(publicURL string, k signingKey, merchantID, reportID string, expires time.Time) string {
	ms := expires.UnixMilli()
	v := url.Values{
		"id":        {reportID},
		"merchant":  {merchantID},
		"expires":   {strconv.FormatInt(ms, 10)},
		"key":       {k.id},
		"signature": {base64.RawURLEncoding.EncodeToString(k.mac(merchantID, reportID, ms))},
	}
	return publicURL + "/api" + FilePath + "?" + v.Encode()
}

// maxLinkValue bounds each value of a link's query.
const maxLinkValue = 128

// parseLink reads a link's query; any malformed value is ErrLink.
func parseLink(v url.Values) (link, error) {
	for _, name := range []string{"id", "merchant", "expires", "key", "signature"} {
		if len(v[name]) != 1 || v.Get(name) == "" || len(v.Get(name)) > maxLinkValue {
			return link{}, ErrLink
		}
	}
	expires, err := strconv.ParseInt(v.Get("expires"), 10, 64)
	if err != nil || expires <= 0 {
		return link{}, ErrLink
	}
	sig, err := base64.RawURLEncoding.DecodeString(v.Get("signature"))
	if err != nil {
		return link{}, ErrLink
	}
	return link{reportID: v.Get("id"), merchantID: v.Get("merchant"), keyID: v.Get("key"), expiresMS: expires, signature: sig}, nil
}

// check verifies l's signature with its key at the deployment's time now;
// the expiry, read on the merchant's clock, is the caller's to check.
func (l link) check(ctx context.Context, q store.Querier, now time.Time) error {
	k, err := keyByID(ctx, q, l.keyID)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrLink
	}
	if err != nil {
		return err
	}
	if !hmac.Equal(l.signature, k.mac(l.merchantID, l.reportID, l.expiresMS)) || !k.verifies(now) {
		return ErrLink
	}
	return nil
}
