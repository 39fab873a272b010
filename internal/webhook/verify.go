package webhook

import (
	"crypto/hmac"
	"errors"
	"strconv"
	"strings"
	"time"
)

// MaxSignatures bounds the signatures one webhook-signature header may list
// for Verify (Standard Webhooks lists one per secret that signs: two while
// a rotated secret still signs beside the new one).
const MaxSignatures = 8

// ErrNoMatch is Verify's answer for a header none of whose v1 signatures
// is the secret's over the message.
var ErrNoMatch = errors.New("no v1 signature in webhook-signature is the secret's HMAC-SHA256 of webhook-id.webhook-timestamp.body")

// Verify checks a delivery as its receiver should (Standard Webhooks): the
// secret's HMAC-SHA256 of "id.timestamp.body" must be one of the
// space-separated "v1,<base64>" signatures of the header. It returns
// ErrNoMatch, or what is wrong with the secret, the timestamp or the header.
// It does not check how old the timestamp is: a receiver also refuses a
// timestamp more than a few minutes from its own clock (against replays),
// which a check of a captured delivery cannot do.
func Verify(secret, id, timestamp string, body []byte, header string) error {
	if id == "" {
		return errors.New("webhook-id is empty")
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || seconds < 0 {
		return errors.New("webhook-timestamp must be whole seconds since 1970 (Unix time)")
	}
	want, err := Sign(secret, id, time.Unix(seconds, 0), body)
	if err != nil {
		return err
	}
	signatures := strings.Fields(header)
	if len(signatures) == 0 {
		return errors.New("webhook-signature lists no signature")
	}
	if len(signatures) > MaxSignatures {
		return errors.New("webhook-signature lists more than " + strconv.Itoa(MaxSignatures) + " signatures")
	}
	for _, sig := range signatures {
		if strings.HasPrefix(sig, "v1,") && hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return ErrNoMatch
}
