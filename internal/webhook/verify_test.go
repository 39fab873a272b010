package webhook

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestVerify: a signature Sign made verifies, alone or beside another
// secret's (a rotation's two); any change to the id, timestamp or body, or
// another secret, does not; malformed input says what is wrong.
func TestVerify(t *testing.T) {
	const secret, other = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_c2VjcmV0LXR3by1vZi10aGUtcm90YXRpb24="
	at := time.Unix(1700000000, 0)
	body := []byte(`{"type":"payin.received"}`)
	sig, err := Sign(secret, "msg_1", at, body)
	if err != nil {
		t.Fatal(err)
	}
	otherSig, err := Sign(other, "msg_1", at, body)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                   string
		secret, id, ts, header string
		body                   []byte
		wantErr                error  // nil: valid
		wantText               string // when wantErr is not ErrNoMatch
	}{
		{"its signature", secret, "msg_1", "1700000000", sig, body, nil, ""},
		{"beside another secret's", secret, "msg_1", "1700000000", otherSig + " " + sig, body, nil, ""},
		{"another secret", other, "msg_1", "1700000000", sig, body, ErrNoMatch, ""},
		{"another id", secret, "msg_2", "1700000000", sig, body, ErrNoMatch, ""},
		{"another timestamp", secret, "msg_1", "1700000001", sig, body, ErrNoMatch, ""},
		{"another body", secret, "msg_1", "1700000000", sig, []byte(`{"type":"payin.failed"}`), ErrNoMatch, ""},
		{"not v1", secret, "msg_1", "1700000000", "v2," + strings.TrimPrefix(sig, "v1,"), body, ErrNoMatch, ""},
		{"no signature", secret, "msg_1", "1700000000", "  ", body, errors.New(""), "lists no signature"},
		{"a timestamp in milliseconds' clothing", secret, "msg_1", "17e8", sig, body, errors.New(""), "whole seconds"},
		{"a secret that is not base64", "whsec_%%%", "msg_1", "1700000000", sig, body, errors.New(""), "signing secret"},
		{"too many signatures", secret, "msg_1", "1700000000", strings.Repeat(otherSig+" ", MaxSignatures) + sig, body, errors.New(""), "more than 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secret, tt.id, tt.ts, tt.body, tt.header)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("Verify = %v, want valid", err)
			case tt.wantErr == ErrNoMatch && !errors.Is(err, ErrNoMatch):
				t.Errorf("Verify = %v, want ErrNoMatch", err)
			case tt.wantText != "" && (err == nil || !strings.Contains(err.Error(), tt.wantText)):
				t.Errorf("Verify = %v, want an error saying %q", err, tt.wantText)
			}
		})
	}
}
