package rail

import (
	"context"
	"fmt"
	"regexp"

	"payd/internal/payfile"
	"payd/internal/store"
)

// KeyBankReference is the global key of a bank reference: claimed for its
// merchant in the transaction that gives a record its reference, so that a
// reference is unique per deployment and what the bank reports of it finds
// its merchant (store.KeyOwner), then its record.
const KeyBankReference store.KeyKind = "bank_reference"

// Widths of a bank reference (CONTRACT §25): 16 [A-Z0-9] on aba and pain001
// rails (the ABA lodgement reference, pain.001's EndToEndId) and wherever no
// bank-file rail serves the transfer; 10 digits on a zengin rail (顧客コード1).
const (
	ReferenceLen       = 16
	ZenginReferenceLen = 10
)

var (
	referencePattern       = regexp.MustCompile(`^[A-Z0-9]{16}$`)
	zenginReferencePattern = regexp.MustCompile(`^[0-9]{10}$`)
)

// ValidReference reports whether ref is a bank reference of format's width.
func ValidReference(format payfile.Format, ref string) bool {
	if format == payfile.Zengin {
		return zenginReferencePattern.MatchString(ref)
	}
	return referencePattern.MatchString(ref)
}

// DrawReference gives a transfer of (currency, method) for merchantID its
// bank reference, in tx: ten digits when r sends it to a zengin rail, else
// 16 [A-Z0-9]; claimed in global_keys, which keeps it unique. The 16
// characters are drawn from 36^16 and their claim is sent ahead
// (store.ClaimRandom); ten digits are few enough that a draw taken
// already is no one-in-billions event, so their claim waits for its answer
// and draws again, the transaction going on (store.ClaimNew).
func DrawReference(ctx context.Context, tx *store.Tx, r Rail, merchantID, currency, method string) (string, error) {
	format, err := FileFormatOf(ctx, tx, r, currency, method)
	if err != nil {
		return "", err
	}
	var ref string
	if format == payfile.Zengin {
		ref, err = store.ClaimNew(ctx, tx, KeyBankReference, merchantID, func() string { return store.RandomDigits(ZenginReferenceLen) })
	} else {
		ref, err = store.ClaimRandom(ctx, tx, KeyBankReference, merchantID, func() string { return store.RandomID(ReferenceLen) })
	}
	if err != nil {
		return "", fmt.Errorf("draw a bank reference: %w", err)
	}
	return ref, nil
}
