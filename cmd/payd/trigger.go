package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"

	"payd/internal/store"
)

// payd trigger makes an event happen on a sandbox through the public API
// and the sandbox endpoints (CONTRACT §21): a payin received or failed, a
// payout completed, a payout transaction failed, a PayID payment request
// received. It needs an AUD app (the sandbox's demo merchant has one) and
// refuses a production server.

// triggerStep makes one event happen as the client's app.
type triggerStep func(ctx context.Context, c *apiClient) (string, error)

// triggers are the events payd trigger makes, in --list order.
var triggers = []struct {
	event string
	make  triggerStep
}{
	{"payin.received", func(ctx context.Context, c *apiClient) (string, error) { return triggerPayin(ctx, c, "completed") }},
	{"payin.failed", func(ctx context.Context, c *apiClient) (string, error) { return triggerPayin(ctx, c, "failed") }},
	{"payout.completed", func(ctx context.Context, c *apiClient) (string, error) { return triggerPayout(ctx, c, sandboxBankOK) }},
	{"payout_transaction.failed", func(ctx context.Context, c *apiClient) (string, error) {
		return triggerPayout(ctx, c, sandboxBankFails)
	}},
	{"payment_request.received", triggerPaymentRequest},
	{"dispute.created", triggerDispute},
}

// Payout details the sandbox network pays, and refuses (an all-zero account number).
var (
	sandboxBankOK    = map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}
	sandboxBankFails = map[string]any{"bsb": "062000", "account_number": "000000000", "account_name": "Nobody"}
)

func runTrigger(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "trigger")
	api := f.String("api", "", "payd's public URL, such as http://localhost:8080 (payd appends /api)")
	appID := f.String("app-id", "", "the app (of an AUD account) the event happens to")
	secretKey := f.String("secret-key", "", "the app's secret key")
	list := f.Bool("list", false, "print the events trigger makes, one a line")
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitCode(0)
		}
		return exitCode(2)
	}
	if *list {
		for _, t := range triggers {
			fmt.Fprintln(env.stdout, t.event)
		}
		return nil
	}
	if f.NArg() != 1 {
		return usageError{"name one EVENT (payd trigger --list shows them)"}
	}
	event := f.Arg(0)
	i := slices.IndexFunc(triggers, func(t struct {
		event string
		make  triggerStep
	}) bool {
		return t.event == event
	})
	if i < 0 {
		return usageError{fmt.Sprintf("payd trigger cannot make %q (payd trigger --list shows what it can)", event)}
	}
	if err := required(map[string]*string{"api": api, "app-id": appID, "secret-key": secretKey}); err != nil {
		return err
	}
	c, err := newAPIClient(*api, *appID, *secretKey)
	if err != nil {
		return err
	}
	var clock map[string]any
	if err := c.call(ctx, "GET", "/v2/sandbox/clock", nil, &clock); err != nil {
		var refused apiError
		if errors.As(err, &refused) && refused.status == http.StatusNotFound {
			return fmt.Errorf("%s is a production server (it has no sandbox clock): payd trigger works only against a sandbox", *api)
		}
		return err
	}
	what, err := triggers[i].make(ctx, c)
	if err != nil {
		return fmt.Errorf("trigger %s: %w", event, err)
	}
	fmt.Fprintf(env.stdout, "Triggered %s: %s\n", event, what)
	return nil
}

// advanceClock runs the work due on the app's sandbox clock, after moving it seconds on.
func advanceClock(ctx context.Context, c *apiClient, seconds int) error {
	return c.call(ctx, "POST", "/v2/sandbox/clock", map[string]any{"advance_seconds": seconds}, nil)
}

// triggerPayin creates an AUD PayID payin and simulates its payment
// completed or failed.
func triggerPayin(ctx context.Context, c *apiClient, status string) (string, error) {
	uuid, err := createPayin(ctx, c, "25.00")
	if err != nil {
		return "", err
	}
	if err := c.call(ctx, "POST", "/v2/payins/simulate", map[string]any{"uuid": uuid, "status": status}, nil); err != nil {
		return "", err
	}
	return "payin " + uuid, advanceClock(ctx, c, 0)
}

// triggerEmail is the payer of trigger's payins: au_payid_npp_aud needs a
// contact with that email, which trigger makes the first time.
const triggerEmail = "jane.trigger@example.com"

func createPayin(ctx context.Context, c *apiClient, amount string) (string, error) {
	err := c.call(ctx, "POST", "/v2/contacts", map[string]any{"email": triggerEmail, "first_name": "Jane", "last_name": "Payer", "type": "individual",
		"dob": "1990-02-28", "phone": "+61 412 345 678", "gender": "female", "street": "1 George St", "city": "Sydney", "postal_code": "2000",
		"state": "NSW", "country": "AU"}, nil)
	var refused apiError
	if err != nil && !(errors.As(err, &refused) && refused.status == http.StatusConflict) {
		return "", err
	}
	var p struct {
		UUID string `json:"uuid"`
	}
	err = c.call(ctx, "POST", "/v2/payins", map[string]any{"currency": "AUD", "amount": amount, "payin_method_name": "au_payid_npp_aud",
		"payin_method_params": map[string]any{"callback_url": "https://shop.example/return"}, "name": "Jane Payer", "email": triggerEmail,
		"description": "payd trigger"}, &p)
	return p.UUID, err
}

// triggerPayout funds the account with a received payin, then pays a
// payout of one transaction to bank, which the sandbox network settles.
func triggerPayout(ctx context.Context, c *apiClient, bank map[string]any) (string, error) {
	funding, err := createPayin(ctx, c, "50.00")
	if err != nil {
		return "", err
	}
	if err := c.call(ctx, "POST", "/v2/payins/simulate", map[string]any{"uuid": funding, "status": "completed"}, nil); err != nil {
		return "", err
	}
	if err := advanceClock(ctx, c, 0); err != nil {
		return "", err
	}
	var p struct {
		UUID string `json:"uuid"`
	}
	ref := store.RandomID(12)
	err = c.call(ctx, "POST", "/v2/payouts", map[string]any{"currency": "AUD", "payout_method_name": "au_bank_aud", "description": "payd trigger",
		"external_id": "trigger-" + ref, "payout_transaction_details": []any{map[string]any{"first_name": "Jane", "last_name": "Doe",
			"email": "jane@example.com", "amount": "10.00", "external_id": "trigger-tx-" + ref, "payout_method_params": bank}}}, &p)
	if err != nil {
		return "", err
	}
	// The payout is handed to the sandbox network now, which answers 10 s later.
	if err := advanceClock(ctx, c, 0); err != nil {
		return "", err
	}
	return "payout " + p.UUID, advanceClock(ctx, c, 10)
}

// triggerPaymentRequest creates a one-time PayID payment request and pays it.
func triggerPaymentRequest(ctx context.Context, c *apiClient) (string, error) {
	var req struct {
		ID           int64  `json:"id"`
		RequestPayID string `json:"request_payid"`
	}
	if err := c.call(ctx, "POST", "/v1/merchants/create_payment", map[string]any{"amount": "20.00"}, &req); err != nil {
		return "", err
	}
	if err := c.call(ctx, "POST", "/v1/payment_requests/simulate_payment", map[string]any{"payid": req.RequestPayID, "amount": "20.00", "payer_name": "JANE PAYER"}, nil); err != nil {
		return "", err
	}
	return fmt.Sprintf("payment request %d", req.ID), advanceClock(ctx, c, 0)
}

// triggerDispute has the sandbox make a card payment, pay it and dispute it
// (CONTRACT §25: POST /v2/sandbox/disputes without payment_id).
func triggerDispute(ctx context.Context, c *apiClient) (string, error) {
	var d struct {
		UUID string `json:"uuid"`
	}
	if err := c.call(ctx, "POST", "/v2/sandbox/disputes", map[string]any{}, &d); err != nil {
		return "", err
	}
	return "dispute " + d.UUID, nil
}
