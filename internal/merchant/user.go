package merchant

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/mail"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"payd/internal/fault"
	"payd/internal/store"
)

// Role is what a portal user may do. Only admin and finance decide payouts.
type Role string

const (
	Admin     Role = "admin"
	Finance   Role = "finance"
	Developer Role = "developer"
	Viewer    Role = "viewer"
)

// ParseRole reads a role name.
func ParseRole(s string) (Role, bool) {
	switch r := Role(s); r {
	case Admin, Finance, Developer, Viewer:
		return r, true
	}
	return "", false
}

// NewUser is what `payd user create --json` prints.
type NewUser struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Role   Role   `json:"role"`
}

// Password bounds: long enough to matter (CONTRACT §13: a new password has
// at least 12 characters), short enough that hashing stays cheap.
const (
	minPasswordLen = 12
	maxPasswordLen = 256
)

// CreateUser adds a portal user to the merchant.
func (s *Service) CreateUser(ctx context.Context, merchantID, email string, role Role, password string) (NewUser, error) {
	f := fault.Fields{}
	email = strings.ToLower(strings.TrimSpace(email))
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		f.Add("email", "must be an email address")
	}
	if _, ok := ParseRole(string(role)); !ok {
		f.Add("role", "must be admin, finance, developer or viewer")
	}
	if n := len([]rune(password)); n < minPasswordLen || len(password) > maxPasswordLen {
		f.Add("password", fmt.Sprintf("must be %d to %d characters", minPasswordLen, maxPasswordLen))
	}
	if err := f.Err(); err != nil {
		return NewUser{}, err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return NewUser{}, err
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (NewUser, error) {
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM merchants WHERE id = $1`, merchantID).Scan(&exists); err != nil {
			return NewUser{}, fmt.Errorf("create user: %w", err)
		}
		if exists == 0 {
			return NewUser{}, fault.NotFoundf("no merchant %s", merchantID)
		}
		id, err := InsertUser(ctx, tx, merchantID, email, role, hash, s.clock.Now())
		if err != nil {
			return NewUser{}, err
		}
		return NewUser{UserID: id, Email: email, Role: role}, nil
	})
}

// InsertUser adds a portal user to a merchant and returns the user's id.
// passwordHash is empty for a user invited to set one. An email signs in to
// one merchant only: one that any merchant's user has already is refused.
func InsertUser(ctx context.Context, tx *store.Tx, merchantID, email string, role Role, passwordHash string, now time.Time) (string, error) {
	free, err := store.ClaimKey(ctx, tx, store.KeyPortalEmail, email, merchantID)
	if err != nil {
		return "", err
	}
	if !free {
		return "", fault.State("a user with email %s already exists", email)
	}
	id, err := store.InsertWithID(ctx, store.UUIDLen, func(id string) (bool, error) {
		return store.OneRow(tx.ExecContext(ctx, `INSERT INTO users (id, merchant_id, email, role, password_hash, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (merchant_id, id) DO NOTHING`, id, merchantID, email, string(role), passwordHash, now.UnixMilli()))
	})
	if err != nil {
		return "", fmt.Errorf("add user: %w", err)
	}
	return id, nil
}

// argon2id parameters: OWASP's first recommended configuration (19 MiB, two
// passes, one lane). Each hash holds its memory for its duration, so at most
// hashSlots run at once: a burst of portal sign-ins queues rather than
// taking 19 MiB each (payd's whole working set is smaller than a few of
// them). Hashes made with other parameters (64 MiB before) still verify:
// a hash carries its own.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	hashSlots    = 2
	// maxArgonMemory and maxArgonTime bound what a stored hash may ask for.
	maxArgonMemory = 256 * 1024
	maxArgonTime   = 10
)

// passwordCost is the work of a new hash: passes and memory in KiB.
type passwordCost struct{ time, memory uint32 }

// productionCost is every real password's; cheapCost the least argon2id
// allows, which only a test binary may choose (UseCheapPasswordsInTests).
var (
	productionCost = passwordCost{argonTime, argonMemory}
	cheapCost      = passwordCost{1, 8}
)

// hashCost is the cost HashPassword uses now.
var hashCost atomic.Pointer[passwordCost]

func costNow() passwordCost {
	if c := hashCost.Load(); c != nil {
		return *c
	}
	return productionCost
}

// UseCheapPasswordsInTests makes HashPassword use the least work argon2id
// allows, for the rest of the process, so a test that signs users in by the
// dozen does not spend its time hashing. It panics outside a test binary: no
// real password is ever hashed cheaply. TestPasswordHashes checks the
// production cost itself.
func UseCheapPasswordsInTests() {
	if !testing.Testing() {
		panic("merchant: cheap password hashes outside a test")
	}
	hashCost.Store(&cheapCost)
}

var argonSlots = make(chan struct{}, hashSlots)

// idKey is argon2.IDKey in one of the hashSlots.
func idKey(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
	argonSlots <- struct{}{}
	defer func() { <-argonSlots }()
	return argon2.IDKey(password, salt, time, memory, threads, keyLen)
}

// HashPassword returns an argon2id hash in the PHC string format.
func HashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	c := costNow()
	key := idKey([]byte(password), salt, c.time, c.memory, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=19$%s$%s$%s", c.params(), enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// params is the parameter part of a hash made at c.
func (c passwordCost) params() string {
	return fmt.Sprintf("m=%d,t=%d,p=%d", c.memory, c.time, argonThreads)
}

// NeedsRehash reports whether hash was made with other parameters than
// HashPassword uses now (the 64 MiB ones of before, say): a sign-in that
// proves the password then stores a fresh hash.
func NeedsRehash(hash string) bool {
	parts := strings.Split(hash, "$")
	return len(parts) != 6 || parts[1] != "argon2id" || parts[3] != costNow().params()
}

// CheckPassword reports whether password matches a HashPassword hash, in constant time.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m > maxArgonMemory || t > maxArgonTime || t == 0 || p == 0 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(password) > maxPasswordLen || len(want) == 0 || len(want) > 64 {
		return false
	}
	got := idKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
