package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Request is the body of POST /v1/payment_gateways/create_payment.
type Request struct {
	OrderID                    string         `json:"order_id" required:"true" doc:"The shop's order identifier, 1 to 100 characters, unique among the merchant's gateway payments (a repeat is 409 ALREADY_EXISTS naming the existing payment_id)." example:"ORDER-1001"`
	Amount                     money.Input    `json:"amount" required:"true" doc:"AUD, positive, at most 2 decimals; a JSON number or a decimal string." example:"49.95"`
	Description                string         `json:"description,omitempty" doc:"Shown on the checkout page; at most 255 characters." example:"Order 1001 at Example Shop"`
	OrderSuccessURL            string         `json:"order_success_url" required:"true" doc:"Where the customer returns after paying: an absolute http(s) URL (https in production), at most 2048 characters." example:"https://shop.example/orders/1001/thanks"`
	PaymentGatewayNotification webhook.Target `json:"payment_gateway_notification" required:"true" doc:"endpoint_url (required) receives every status change (gateway_payment.<status>), with authorization_header sent verbatim as Authorization."`
	OrderDetails               OrderDetails   `json:"order_details,omitempty"`
	// noTarget is a sandbox payment of payd's own (SandboxPaidPayment),
	// which notifies no one: only its events' stream and endpoints hear.
	noTarget bool
}

// OrderDetails describes the order on the checkout page.
type OrderDetails struct {
	BillingDetails  Address `json:"billing_details,omitempty"`
	ShippingDetails Address `json:"shipping_details,omitempty"`
	Items           []Item  `json:"items,omitempty" doc:"At most 100 items."`
}

// Address is a billing or shipping address; every member at most 255 characters.
type Address struct {
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	Phone       string `json:"phone,omitempty"`
	Email       string `json:"email,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
	PostalCode  string `json:"postal_code,omitempty"`
	City        string `json:"city,omitempty"`
	Address     string `json:"address,omitempty"`
	Company     string `json:"company,omitempty"`
	State       string `json:"state,omitempty"`
}

// Item is one line of an order.
type Item struct {
	ID             string `json:"id,omitempty"`
	Name           string `json:"name,omitempty"`
	Quantity       string `json:"quantity" doc:"A positive decimal string, such as \"2\" or \"1.5\" (at most 4 decimals)." example:"2"`
	Price          string `json:"price" doc:"The unit price in AUD, a decimal string with at most 2 decimals." example:"24.95"`
	VariantID      string `json:"variant_id,omitempty"`
	ImageURL       string `json:"image_url,omitempty" doc:"An absolute http(s) URL (https in production), at most 2048 characters, shown on the checkout page."`
	EnableCashback bool   `json:"enable_cashback,omitempty"`
}

// CreateResult is the answer of create_payment.
type CreateResult struct {
	RedirectURL string     `json:"redirect_url" doc:"The hosted checkout page to send the customer to."`
	PaymentID   int64      `json:"payment_id"`
	OrderID     string     `json:"order_id"`
	Status      Status     `json:"status" enum:"pending"`
	ExpiredAt   clock.Time `json:"expired_at" doc:"The link stops taking payments at this time (24 hours after creation) and the payment becomes expired."`
}

// Bounds of a request.
const (
	maxOrderIDLen = 100
	maxTextLen    = 255
	maxURLLen     = 2048
	maxItems      = 100
	// maxAmountMinor is the largest payment: 99,999,999.99 AUD.
	maxAmountMinor = 9_999_999_999
)

var (
	quantityPattern = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,4})?$`)
	pricePattern    = regexp.MustCompile(`^[0-9]{1,11}(\.[0-9]{1,2})?$`)
)

func textOK(s string, max int) bool {
	if utf8.RuneCountInString(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// checkURL checks an absolute http(s) URL; production takes https only.
func (s *Service) checkURL(f fault.Fields, name, raw string, required bool) {
	if raw == "" {
		if required {
			f.Add(name, "is required")
		}
		return
	}
	if len(raw) > maxURLLen {
		f.Add(name, fmt.Sprintf("is longer than %d characters", maxURLLen))
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || strings.ContainsAny(raw, " \t\r\n\"'<>") {
		f.Add(name, "must be an absolute http(s) URL without credentials")
		return
	}
	if !s.policy.AllowPrivate && u.Scheme != "https" {
		f.Add(name, "must use https")
	}
}

func (s *Service) validate(r *Request) (int64, error) {
	f := fault.Fields{}
	switch {
	case strings.TrimSpace(r.OrderID) == "":
		f.Add("order_id", "is required")
	case !textOK(r.OrderID, maxOrderIDLen):
		f.Add("order_id", fmt.Sprintf("must be at most %d characters without control characters", maxOrderIDLen))
	}
	c, err := money.Lookup(Currency)
	if err != nil {
		return 0, err
	}
	amount, _, err := money.ParseField("amount", r.Amount, c)
	if err != nil {
		if e, ok := fault.As(err); ok && e.Code == fault.CodeAmountOutOfRange {
			return 0, err
		}
		f.Add("amount", fieldProblem(err))
	} else if amount > maxAmountMinor {
		return 0, fault.Rule(fault.CodeAmountOutOfRange, "amount is at most %s AUD", money.Format(maxAmountMinor, c))
	}
	if !textOK(r.Description, maxTextLen) {
		f.Add("description", fmt.Sprintf("must be at most %d characters without control characters", maxTextLen))
	}
	s.checkURL(f, "order_success_url", r.OrderSuccessURL, true)
	if r.noTarget {
		r.PaymentGatewayNotification = webhook.Target{}
	} else if r.PaymentGatewayNotification.EndpointURL == "" {
		f.Add("payment_gateway_notification.endpoint_url", "is required")
	} else if err := s.policy.Validate("payment_gateway_notification", r.PaymentGatewayNotification); err != nil {
		if e, ok := fault.As(err); ok && len(e.Fields) > 0 {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		} else {
			return 0, err
		}
	}
	checkAddress(f, "order_details.billing_details", r.OrderDetails.BillingDetails)
	checkAddress(f, "order_details.shipping_details", r.OrderDetails.ShippingDetails)
	if n := len(r.OrderDetails.Items); n > maxItems {
		f.Add("order_details.items", fmt.Sprintf("has %d items; at most %d are allowed", n, maxItems))
	} else {
		for i, it := range r.OrderDetails.Items {
			name := "order_details.items[" + strconv.Itoa(i) + "]."
			for k, v := range map[string]string{"id": it.ID, "name": it.Name, "variant_id": it.VariantID} {
				if !textOK(v, maxTextLen) {
					f.Add(name+k, fmt.Sprintf("must be at most %d characters without control characters", maxTextLen))
				}
			}
			if !quantityPattern.MatchString(it.Quantity) || strings.Trim(it.Quantity, "0.") == "" {
				f.Add(name+"quantity", "must be a positive decimal string such as \"2\" (at most 4 decimals)")
			}
			if !pricePattern.MatchString(it.Price) {
				f.Add(name+"price", "must be a decimal string such as \"24.95\" (at most 2 decimals)")
			}
			s.checkURL(f, name+"image_url", it.ImageURL, false)
		}
	}
	return amount, f.Err()
}

// fieldProblem is the problem text of a single field error.
func fieldProblem(err error) string {
	if e, ok := fault.As(err); ok {
		for _, v := range e.Fields {
			return v
		}
		return e.Message
	}
	return err.Error()
}

func checkAddress(f fault.Fields, prefix string, a Address) {
	for k, v := range map[string]string{"first_name": a.FirstName, "last_name": a.LastName, "phone": a.Phone, "email": a.Email,
		"country_code": a.CountryCode, "postal_code": a.PostalCode, "city": a.City, "address": a.Address, "company": a.Company, "state": a.State} {
		if !textOK(v, maxTextLen) {
			f.Add(prefix+"."+k, fmt.Sprintf("must be at most %d characters without control characters", maxTextLen))
		}
	}
}

// Create makes a gateway payment for an order (create_payment).
func (s *Service) Create(ctx context.Context, tx *store.Tx, p merchant.Principal, req Request) (CreateResult, error) {
	amount, err := s.validate(&req)
	if err != nil {
		return CreateResult{}, err
	}
	acc, err := merchant.AccountByCurrency(ctx, tx, p.MerchantID, merchant.Payments, Currency)
	if err != nil {
		if fault.Is(err, fault.CodeNotFound) {
			return CreateResult{}, fault.Rule(fault.CodeCurrency, "the payment gateway takes AUD and this merchant has no AUD payments account")
		}
		return CreateResult{}, err
	}
	var existing int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM gateway_payments WHERE merchant_id = $1 AND order_id = $2`, p.MerchantID, req.OrderID).Scan(&existing)
	if err == nil {
		return CreateResult{}, alreadyExists(existing, req.OrderID)
	}
	if !isNoRows(err) {
		return CreateResult{}, err
	}
	now := s.clock.Of(p)
	details, _ := json.Marshal(req.OrderDetails)
	expiredAt := now.Add(LinkLifetime)
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO gateway_payments (merchant_id, account_id, order_id, currency, amount, description,
		order_success_url, endpoint_url, authorization_header, order_details, status, expired_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)
		ON CONFLICT (merchant_id, order_id) DO NOTHING RETURNING id`,
		p.MerchantID, acc.ID, req.OrderID, Currency, amount, req.Description, req.OrderSuccessURL,
		req.PaymentGatewayNotification.EndpointURL, req.PaymentGatewayNotification.AuthorizationHeader, string(details),
		string(Pending), expiredAt.UnixMilli(), now.UnixMilli()).Scan(&id)
	if isNoRows(err) {
		// A concurrent create took the order_id first.
		if err := tx.QueryRowContext(ctx, `SELECT id FROM gateway_payments WHERE merchant_id = $1 AND order_id = $2`, p.MerchantID, req.OrderID).Scan(&existing); err != nil {
			return CreateResult{}, err
		}
		return CreateResult{}, alreadyExists(existing, req.OrderID)
	}
	if err != nil {
		return CreateResult{}, fmt.Errorf("create gateway payment: %w", err)
	}
	// The id comes from a sequence, so it is free: its claim is sent, not asked.
	if err := store.SendKey(ctx, tx, store.KeyGatewayPayment, strconv.FormatInt(id, 10), p.MerchantID); err != nil {
		return CreateResult{}, err
	}
	if err := job.Enqueue(ctx, tx, s.queue, jobExpire, ref{MerchantID: p.MerchantID, ID: id},
		job.Options{ClockOf: p.MerchantID, RunAt: expiredAt, UniqueKey: jobExpire.String() + ":" + strconv.FormatInt(id, 10)}); err != nil {
		return CreateResult{}, err
	}
	return CreateResult{RedirectURL: s.CheckoutURL(id), PaymentID: id, OrderID: req.OrderID, Status: Pending,
		ExpiredAt: clock.Time{T: expiredAt}}, nil
}

func alreadyExists(id int64, orderID string) error {
	return fault.New(fault.Conflict, fault.CodeAlreadyExists, "gateway payment %d already has order_id %q", id, orderID)
}

// PaymentQuery names a payment (GET /v1/payment_gateways/payment).
func parseID(raw string) (int64, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if raw == "" {
		return 0, fault.Field("payment_id", "is required")
	}
	if err != nil || id <= 0 {
		return 0, fault.Field("payment_id", "must be a positive integer")
	}
	return id, nil
}

// ParseID reads a payment_id query parameter.
func ParseID(raw string) (int64, error) { return parseID(raw) }
