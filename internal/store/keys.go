package store

import (
	"context"
	"fmt"
)

// Global keys. Every merchant-owned row is keyed by its merchant (DESIGN.md,
// "Storage"), but a few keys arrive before the merchant is known: an app-id
// or an access token on an API request, a portal user's email at login, a
// session or invite token, an identity verification token, a PayID paid by
// the NPP, an account number, and the ids in the hosted pages' addresses (a
// payin's /pay/{uuid}, a payin link's /links/{uuid}, a gateway payment's
// /checkout/{id}). Such a key is claimed in global_keys, in the transaction
// that writes its row: the claim is what keeps it unique across merchants
// (the row's own table is unique only within its merchant), and a lookup
// asks global_keys for the key's merchant first, then reads the row with it.
// On Citus global_keys is distributed by the key, so both statements are
// routed to one shard each.

// KeyKind is what a global key names.
type KeyKind string

const (
	KeyApp            KeyKind = "app"
	KeyAccessToken    KeyKind = "access_token"
	KeyAccountNumber  KeyKind = "account_number"
	KeyPortalEmail    KeyKind = "portal_email"
	KeyPortalSession  KeyKind = "portal_session"
	KeyPortalInvite   KeyKind = "portal_invite"
	KeyVerification   KeyKind = "verification_token"
	KeyPayID          KeyKind = "payid"
	KeyPayin          KeyKind = "payin"
	KeyPayinLink      KeyKind = "payin_link"
	KeyGatewayPayment KeyKind = "gateway_payment"
)

// ClaimKey records that merchantID holds key, and reports false, writing
// nothing, when a merchant (this one or another) holds it already. It runs
// in the transaction that writes the key's row; its conflict is an answer,
// never an error, so the transaction goes on (a new id is drawn, or the
// caller answers "taken").
func ClaimKey(ctx context.Context, tx *Tx, kind KeyKind, key, merchantID string) (bool, error) {
	ok, err := OneRow(tx.ExecContext(ctx, `INSERT INTO global_keys (key, kind, merchant_id) VALUES ($1, $2, $3)
		ON CONFLICT (key, kind) DO NOTHING`, key, string(kind), merchantID))
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", kind, err)
	}
	return ok, nil
}

// ClaimRandom is ClaimNew for a key drawn at random from a space so large
// that a draw taken already is a one-in-billions event (a payin's uuid, 36^8
// of them): on PostgreSQL its claim is sent with the transaction's next
// statement, a round trip fewer (Tx.InsertDrawn).
func ClaimRandom(ctx context.Context, tx *Tx, kind KeyKind, merchantID string, newID func() string) (string, error) {
	return InsertUnique(ctx, newID, func(key string) (bool, error) {
		ok, err := tx.InsertDrawn(ctx, `INSERT INTO global_keys (key, kind, merchant_id) VALUES ($1, $2, $3)`, key, string(kind), merchantID)
		if err != nil {
			return false, fmt.Errorf("claim %s: %w", kind, err)
		}
		return ok, nil
	})
}

// SendKey is ClaimKey for a key that cannot be taken already (one drawn from
// a sequence, or a random token too long to collide): the claim is sent with
// the transaction's next statement, and a conflict fails the transaction.
func SendKey(ctx context.Context, tx *Tx, kind KeyKind, key, merchantID string) error {
	return tx.Send(ctx, `INSERT INTO global_keys (key, kind, merchant_id) VALUES ($1, $2, $3)`, key, string(kind), merchantID)
}

// ReleaseKey forgets key, in the transaction that deletes its row, so that
// it can be claimed again.
func ReleaseKey(ctx context.Context, tx *Tx, kind KeyKind, key, merchantID string) error {
	return tx.Send(ctx, `DELETE FROM global_keys WHERE key = $1 AND kind = $2 AND merchant_id = $3`, key, string(kind), merchantID)
}

// KeyOwner returns the merchant that holds key, or sql.ErrNoRows when none
// does. The key's row is then read with that merchant and may be gone (a
// deleted session), which the caller meets as the same sql.ErrNoRows.
func KeyOwner(ctx context.Context, q Querier, kind KeyKind, key string) (string, error) {
	var merchantID string
	err := q.QueryRowContext(ctx, `SELECT merchant_id FROM global_keys WHERE key = $1 AND kind = $2`, key, string(kind)).Scan(&merchantID)
	if err != nil {
		return "", fmt.Errorf("find the merchant of a %s: %w", kind, err) // errors.Is(err, sql.ErrNoRows) when none
	}
	return merchantID, nil
}

// ClaimNew draws keys from newID until one is free, claims it for
// merchantID and returns it; the caller then writes the key's row.
func ClaimNew(ctx context.Context, tx *Tx, kind KeyKind, merchantID string, newID func() string) (string, error) {
	return InsertUnique(ctx, newID, func(key string) (bool, error) { return ClaimKey(ctx, tx, kind, key, merchantID) })
}
