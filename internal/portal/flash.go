package portal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"payd/internal/store"
)

// A form that creates something answers 303 to a page (post/redirect/get,
// issue 54 item 5), so that reloading that page sends nothing again. What
// the form made that is shown only once (a new app's secret key, an
// endpoint's signing secret, an invitation's link) goes to that page as the
// session's flash: kept in the session's row, sealed with a key derived
// from the session's cookie (only its hash is stored, so the row alone does
// not reveal it), and cleared by the first view that takes it. A reload
// shows it no more.

// maxFlashBytes bounds a flash's text.
const maxFlashBytes = 4 << 10

// Flash is what a page shows once after the form that redirected to it.
type Flash struct {
	// Page is the path of the page that shows it; another page leaves it.
	Page string `json:"page"`
	// Subject is what the form made (an app-id, an endpoint id).
	Subject string `json:"subject,omitempty"`
	// Secret is shown this once: it is kept nowhere else.
	Secret string `json:"secret,omitempty"`
	// Notice is the page's sentence about what the form did.
	Notice string `json:"notice,omitempty"`
}

// SetFlash keeps f for the session's next view of f.Page, in place of any
// flash it had.
func (s *Service) SetFlash(ctx context.Context, sess Session, f Flash) error {
	sealed, err := sealFlash(sess.Token, f)
	if err != nil {
		return err
	}
	return s.db.Exec(ctx, func(tx *store.Tx) error {
		ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE portal_sessions SET flash = $1 WHERE merchant_id = $2 AND token_hash = $3`,
			sealed, sess.MerchantID, hashToken(sess.Token)))
		if err == nil && !ok {
			err = errExpired
		}
		return err
	})
}

// TakeFlash is the session's flash for page, cleared as it is read: of two
// views at once only one gets it. ok is false when there is none for page
// (a flash for another page stays).
func (s *Service) TakeFlash(ctx context.Context, sess Session, page string) (f Flash, ok bool, err error) {
	var sealed string
	if err := s.db.Read().QueryRowContext(ctx, `SELECT flash FROM portal_sessions WHERE merchant_id = $1 AND token_hash = $2`,
		sess.MerchantID, hashToken(sess.Token)).Scan(&sealed); err != nil || sealed == "" {
		return Flash{}, false, ignoreNoRows(err)
	}
	f, err = openFlash(sess.Token, sealed)
	if err != nil || f.Page != page {
		// A flash that does not open (its session's key changed) is
		// dropped; one for another page waits for it.
		return Flash{}, false, nil
	}
	err = s.db.Exec(ctx, func(tx *store.Tx) error {
		ok, err = store.OneRow(tx.ExecContext(ctx, `UPDATE portal_sessions SET flash = '' WHERE merchant_id = $1 AND token_hash = $2 AND flash = $3`,
			sess.MerchantID, hashToken(sess.Token), sealed))
		return err
	})
	if err != nil || !ok {
		return Flash{}, false, err
	}
	return f, true, nil
}

func ignoreNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// flashKey is the AES-256 key of a session's flash: an HMAC of the
// session's cookie value, which the database never holds.
func flashKey(token string) cipher.AEAD {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("payd portal flash"))
	block, _ := aes.NewCipher(mac.Sum(nil)) // a 32-byte key is always valid
	aead, _ := cipher.NewGCM(block)
	return aead
}

func sealFlash(token string, f Flash) (string, error) {
	plain, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("seal flash: %w", err)
	}
	if len(plain) > maxFlashBytes {
		return "", fmt.Errorf("seal flash: %d bytes, over %d", len(plain), maxFlashBytes)
	}
	aead := flashKey(token)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	return base64.RawStdEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, nil)), nil
}

func openFlash(token, sealed string) (Flash, error) {
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	aead := flashKey(token)
	if err != nil || len(raw) < aead.NonceSize() {
		return Flash{}, errors.New("open flash: damaged")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return Flash{}, fmt.Errorf("open flash: %w", err)
	}
	var f Flash
	return f, json.Unmarshal(plain, &f)
}
