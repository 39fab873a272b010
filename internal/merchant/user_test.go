package merchant

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

// TestPasswordHashes: a hash verifies its password and no other; a hash
// made with the earlier 64 MiB parameters still verifies (a hash carries
// its own); a stored hash that asks for absurd work is refused, not run.
func TestPasswordHashes(t *testing.T) {
	t.Parallel()
	current, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(current, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %s, want OWASP's argon2id parameters m=19456,t=2,p=1", current)
	}
	salt := []byte("0123456789abcdef")
	enc := base64.RawStdEncoding
	old := fmt.Sprintf("$argon2id$v=19$m=65536,t=2,p=1$%s$%s", enc.EncodeToString(salt),
		enc.EncodeToString(argon2.IDKey([]byte("correct horse"), salt, 2, 64*1024, 1, 32)))
	absurd := strings.Replace(old, "m=65536", "m=4194304", 1)
	tests := []struct {
		name, hash, password string
		want                 bool
	}{
		{"current parameters", current, "correct horse", true},
		{"wrong password", current, "correct horse ", false},
		{"earlier 64 MiB parameters", old, "correct horse", true},
		{"earlier parameters, wrong password", old, "wrong", false},
		{"4 GiB asked for", absurd, "correct horse", false},
		{"not a PHC string", "plain", "plain", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckPassword(tt.hash, tt.password); got != tt.want {
				t.Errorf("CheckPassword = %v, want %v", got, tt.want)
			}
		})
	}
}
