package idempotency

import (
	"fmt"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/input"
)

// MaxKeyLen bounds the Idempotency-Key header, in characters (CONTRACT §3).
const MaxKeyLen = 255

// keyHeader names the key in a refusal's fields.
const keyHeader = "Idempotency-Key"

// CheckKey refuses a key the contract does not take with a 422
// VALIDATION_FAILED naming the header, like any other refused field: text
// that breaks input's rule (a control character or broken UTF-8, which
// PostgreSQL would not store), or one of more than MaxKeyLen characters.
func CheckKey(key string) error {
	if err := input.Check(keyHeader, key); err != nil {
		return err
	}
	if utf8.RuneCountInString(key) > MaxKeyLen {
		return fault.Field(keyHeader, fmt.Sprintf("is longer than %d characters", MaxKeyLen))
	}
	return nil
}
