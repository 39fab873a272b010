package store

import (
	"context"
	"crypto/rand"
	"fmt"
)

const base36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// Identifier lengths of CONTRACT §3: v2 records carry an 8-character uuid,
// balance records a 10-character Balance ID, both upper-case base-36.
const (
	UUIDLen      = 8
	BalanceIDLen = 10
)

// RandomID returns n random upper-case base-36 characters.
func RandomID(n int) string { return randomFrom(base36, n) }

// randomFrom returns n characters drawn uniformly from alphabet (at most 256 long).
func randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	// Bytes at or above the largest multiple of len(alphabet) are rejected, so
	// every character is equally likely.
	limit := 256 - 256%len(alphabet)
	buf := make([]byte, n*2)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err)) // cannot happen on a supported platform
		}
		for _, c := range buf {
			if int(c) >= limit || i == n {
				continue
			}
			b[i] = alphabet[int(c)%len(alphabet)]
			i++
		}
	}
	return string(b)
}

// maxIDTries bounds the retries on an id collision: with 36^8 ids a second
// collision in a row means something other than chance is wrong.
const maxIDTries = 5

// RandomDigits returns n random decimal digits, the first never zero.
func RandomDigits(n int) string {
	s := []byte(randomFrom("0123456789", n))
	for s[0] == '0' {
		s[0] = randomFrom("123456789", 1)[0]
	}
	return string(s)
}

// InsertWithID runs insert with fresh random ids of length n until one is not
// taken. insert must use "INSERT … ON CONFLICT DO NOTHING" and report (OneRow) whether
// it wrote the row, so a collision never aborts the transaction.
func InsertWithID(ctx context.Context, n int, insert func(id string) (bool, error)) (string, error) {
	return InsertUnique(ctx, func() string { return RandomID(n) }, insert)
}

// InsertUnique is InsertWithID with any id generator.
func InsertUnique(ctx context.Context, newID func() string, insert func(id string) (bool, error)) (string, error) {
	for range maxIDTries {
		id := newID()
		ok, err := insert(id)
		if err != nil {
			return "", err
		}
		if ok {
			return id, nil
		}
	}
	return "", fmt.Errorf("no free id after %d tries", maxIDTries)
}

// OneRow reports whether a statement touched exactly one row: an "ON CONFLICT
// DO NOTHING" insert that wrote its row, or a conditional update that matched.
func OneRow(res interface{ RowsAffected() (int64, error) }, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
