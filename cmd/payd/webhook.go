package main

import (
	"context"
	"fmt"
	"io"

	"payd/internal/webhook"
)

// maxVerifiedBody bounds the body payd webhook verify reads: more than any
// event payd sends.
const maxVerifiedBody = 16 << 20

// runWebhookVerify checks a webhook delivery's signature as a receiver
// should (CONTRACT §25): the body on standard input, its webhook-id,
// webhook-timestamp and webhook-signature headers as flags, the merchant's
// signing secret (the portal's developers page, or payd merchant
// webhook-secret). Exit 0 valid, 1 not, 2 for a usage error.
func runWebhookVerify(_ context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "webhook verify")
	secret := f.setting("secret", "PAYD_WEBHOOK_SECRET", "", "the signing secret, whsec_…")
	id := f.String("id", "", "the delivery's webhook-id header")
	timestamp := f.String("timestamp", "", "its webhook-timestamp header (Unix seconds)")
	signature := f.String("signature", "", "its webhook-signature header (v1,… and, during a rotation, a second one)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"secret": secret, "id": id, "timestamp": timestamp, "signature": signature}); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(env.stdin, maxVerifiedBody+1))
	if err != nil {
		return fmt.Errorf("read the body from standard input: %w", err)
	}
	if len(body) > maxVerifiedBody {
		return fmt.Errorf("the body on standard input is over %d MiB", maxVerifiedBody>>20)
	}
	if err := webhook.Verify(*secret, *id, *timestamp, body, *signature); err != nil {
		return fmt.Errorf("invalid: %w", err)
	}
	fmt.Fprintf(env.stdout, "valid: webhook %s signed with this secret at %s\n", *id, *timestamp)
	return nil
}
