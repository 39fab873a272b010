package contact

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Bounds of a customer's metadata.
const (
	maxMetadataKeys     = 50
	maxMetadataKeyLen   = 40
	maxMetadataValueLen = 500
)

// Customer is a customer of the merchant as the API returns it.
type Customer struct {
	id         int64
	UUID       string            `json:"uuid" doc:"The customer's id (detail and update take it as id)."`
	FirstName  string            `json:"first_name"`
	LastName   string            `json:"last_name"`
	Email      string            `json:"email"`
	Phone      string            `json:"phone"`
	ExternalID string            `json:"external_id" doc:"The merchant's own customer id; unique within the merchant when set."`
	Street     string            `json:"street"`
	City       string            `json:"city"`
	PostalCode string            `json:"postal_code"`
	State      string            `json:"state"`
	Country    string            `json:"country" doc:"ISO 3166-1 alpha-2."`
	Metadata   map[string]string `json:"metadata" doc:"The merchant's own key-value pairs."`
	CreatedAt  clock.Time        `json:"created_at"`
	UpdatedAt  clock.Time        `json:"updated_at"`
}

// NewCustomer is the body of POST /v2/customers.
type NewCustomer struct {
	FirstName  string            `json:"first_name" doc:"Required, at most 100 characters."`
	LastName   string            `json:"last_name" doc:"Required, at most 100 characters."`
	Email      string            `json:"email" doc:"Required, at most 254 characters. Several customers may share one."`
	Phone      string            `json:"phone,omitempty" doc:"6 to 15 digits, optionally starting with +."`
	ExternalID string            `json:"external_id,omitempty" doc:"The merchant's customer id, at most 64 characters; unique within the merchant (409 CUSTOMER_EXISTS)."`
	Street     string            `json:"street,omitempty" doc:"At most 200 characters."`
	City       string            `json:"city,omitempty" doc:"At most 100 characters."`
	PostalCode string            `json:"postal_code,omitempty" doc:"At most 16 letters, digits, spaces or hyphens."`
	State      string            `json:"state,omitempty" doc:"At most 100 characters."`
	Country    string            `json:"country,omitempty" doc:"ISO 3166-1 alpha-2."`
	Metadata   map[string]string `json:"metadata,omitempty" doc:"At most 50 string values; keys of 1 to 40 characters, values of at most 500."`
}

// CustomerChanges is the body of PUT /v2/customers/update: id finds the
// customer; every other member that is present (and not null) replaces the
// stored value. metadata, when present, replaces the whole object ({} clears it).
type CustomerChanges struct {
	ID         string            `json:"id" doc:"The customer's uuid."`
	FirstName  *string           `json:"first_name,omitempty"`
	LastName   *string           `json:"last_name,omitempty"`
	Email      *string           `json:"email,omitempty"`
	Phone      *string           `json:"phone,omitempty"`
	ExternalID *string           `json:"external_id,omitempty"`
	Street     *string           `json:"street,omitempty"`
	City       *string           `json:"city,omitempty"`
	PostalCode *string           `json:"postal_code,omitempty"`
	State      *string           `json:"state,omitempty"`
	Country    *string           `json:"country,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty" doc:"Replaces the whole metadata object when present."`
}

func (n NewCustomer) customer() Customer {
	return Customer{FirstName: n.FirstName, LastName: n.LastName, Email: n.Email, Phone: n.Phone, ExternalID: n.ExternalID,
		Street: n.Street, City: n.City, PostalCode: n.PostalCode, State: n.State, Country: n.Country, Metadata: n.Metadata}
}

func (ch CustomerChanges) apply(c *Customer) {
	for _, m := range []struct {
		dst *string
		v   *string
	}{
		{&c.FirstName, ch.FirstName}, {&c.LastName, ch.LastName}, {&c.Email, ch.Email}, {&c.Phone, ch.Phone},
		{&c.ExternalID, ch.ExternalID}, {&c.Street, ch.Street}, {&c.City, ch.City}, {&c.PostalCode, ch.PostalCode},
		{&c.State, ch.State}, {&c.Country, ch.Country},
	} {
		if m.v != nil {
			*m.dst = *m.v
		}
	}
	if ch.Metadata != nil {
		c.Metadata = ch.Metadata
	}
}

func (c *Customer) validate() error {
	f := fault.Fields{}
	text(f, "first_name", &c.FirstName, maxNameLen, true)
	text(f, "last_name", &c.LastName, maxNameLen, true)
	email(f, "email", &c.Email, true)
	phone(f, "phone", &c.Phone)
	text(f, "external_id", &c.ExternalID, maxExternalIDLen, false)
	text(f, "street", &c.Street, maxStreetLen, false)
	text(f, "city", &c.City, maxCityLen, false)
	postalCode(f, "postal_code", &c.PostalCode)
	text(f, "state", &c.State, maxStateLen, false)
	country(f, "country", &c.Country, false)
	metadata(f, c.Metadata)
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	return f.Err()
}

// metadata checks the bounds of a metadata object, naming the key at fault.
func metadata(f fault.Fields, m map[string]string) {
	if len(m) > maxMetadataKeys {
		f.Add("metadata", fmt.Sprintf("has at most %d keys", maxMetadataKeys))
		return
	}
	for k, v := range m {
		switch {
		case k == "" || utf8.RuneCountInString(k) > maxMetadataKeyLen || strings.IndexFunc(k, unicode.IsControl) >= 0:
			f.Add("metadata", fmt.Sprintf("keys are 1 to %d characters without control characters", maxMetadataKeyLen))
		case utf8.RuneCountInString(v) > maxMetadataValueLen:
			f.Add("metadata."+k, fmt.Sprintf("is at most %d characters", maxMetadataValueLen))
		}
	}
}

func customerExists(externalID string) error {
	return fault.New(fault.Conflict, CodeCustomerExists, "a customer with external_id %s already exists", externalID)
}

// CreateCustomer adds a customer.
func (s *Service) CreateCustomer(ctx context.Context, tx *store.Tx, p merchant.Principal, in NewCustomer) (Customer, error) {
	c := in.customer()
	if err := c.validate(); err != nil {
		return Customer{}, err
	}
	now := s.clock.Of(p)
	c.CreatedAt, c.UpdatedAt = clock.Time{T: now}, clock.Time{T: now}
	meta, err := json.Marshal(c.Metadata)
	if err != nil {
		return Customer{}, fmt.Errorf("customer metadata: %w", err)
	}
	if err := s.externalIDFree(ctx, tx, p.MerchantID, c.ExternalID, 0); err != nil {
		return Customer{}, err
	}
	c.UUID, err = store.InsertWithID(ctx, store.UUIDLen, func(uuid string) (bool, error) {
		return store.OneRow(tx.ExecContext(ctx, `INSERT INTO customers (uuid, merchant_id, first_name, last_name, email, email_key,
			phone, external_id, street, city, postal_code, state, country, metadata, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) ON CONFLICT (merchant_id, uuid) DO NOTHING`,
			uuid, p.MerchantID, c.FirstName, c.LastName, c.Email, emailKey(c.Email), c.Phone, c.ExternalID, c.Street, c.City,
			c.PostalCode, c.State, c.Country, string(meta), now.UnixMilli()))
	})
	if store.IsUniqueViolation(err) {
		return Customer{}, customerExists(c.ExternalID)
	}
	if err != nil {
		return Customer{}, fmt.Errorf("create customer: %w", err)
	}
	return c, nil
}

// externalIDFree refuses an external_id another customer (not exceptID) of
// the merchant has. The unique index is the last word in a race.
func (s *Service) externalIDFree(ctx context.Context, q store.Querier, merchantID, externalID string, exceptID int64) error {
	if externalID == "" {
		return nil
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM customers WHERE merchant_id = $1 AND external_id = $2 AND id <> $3`,
		merchantID, externalID, exceptID).Scan(&n); err != nil {
		return fmt.Errorf("customer by external_id: %w", err)
	}
	if n > 0 {
		return customerExists(externalID)
	}
	return nil
}

// CustomerDetail returns the merchant's customer with uuid id.
func (s *Service) CustomerDetail(ctx context.Context, p merchant.Principal, id string) (Customer, error) {
	if err := idParam(id); err != nil {
		return Customer{}, err
	}
	return customerByUUID(ctx, s.db.Read(), p.MerchantID, id, false)
}

func idParam(id string) error {
	f := fault.Fields{}
	text(f, "id", &id, 64, true)
	return f.Err()
}

// UpdateCustomer changes the members of a customer that ch carries.
func (s *Service) UpdateCustomer(ctx context.Context, tx *store.Tx, p merchant.Principal, ch CustomerChanges) (Customer, error) {
	if err := idParam(ch.ID); err != nil {
		return Customer{}, err
	}
	now := s.clock.Of(p)
	c, err := customerByUUID(ctx, tx, p.MerchantID, strings.TrimSpace(ch.ID), true)
	if err != nil {
		return Customer{}, err
	}
	ch.apply(&c)
	if err := c.validate(); err != nil {
		return Customer{}, err
	}
	if err := s.externalIDFree(ctx, tx, p.MerchantID, c.ExternalID, c.id); err != nil {
		return Customer{}, err
	}
	meta, err := json.Marshal(c.Metadata)
	if err != nil {
		return Customer{}, fmt.Errorf("customer metadata: %w", err)
	}
	c.UpdatedAt = clock.Time{T: now}
	_, err = tx.ExecContext(ctx, `UPDATE customers SET first_name = $1, last_name = $2, email = $3, email_key = $4, phone = $5,
		external_id = $6, street = $7, city = $8, postal_code = $9, state = $10, country = $11, metadata = $12, updated_at = $13
		WHERE id = $14 AND merchant_id = $15`,
		c.FirstName, c.LastName, c.Email, emailKey(c.Email), c.Phone, c.ExternalID, c.Street, c.City, c.PostalCode, c.State,
		c.Country, string(meta), now.UnixMilli(), c.id, p.MerchantID)
	if store.IsUniqueViolation(err) {
		return Customer{}, customerExists(c.ExternalID)
	}
	if err != nil {
		return Customer{}, fmt.Errorf("update customer %s: %w", c.UUID, err)
	}
	return c, nil
}

// ListCustomers returns a page of the merchant's customers, newest first,
// filtered by lq.Email (case-insensitive) and lq.ExternalID when set.
func (s *Service) ListCustomers(ctx context.Context, p merchant.Principal, lq ListQuery) (Listed[Customer], error) {
	if err := lq.validate(); err != nil {
		return Listed[Customer]{}, err
	}
	w := newWhere(p.MerchantID, lq)
	if key := emailKey(lq.Email); key != "" {
		w.add("email_key = ?", key)
	}
	if lq.ExternalID != "" {
		w.add("external_id = ?", lq.ExternalID)
	}
	return list(ctx, s.db.Read(), "customers", customerColumns, w, lq, scanCustomer)
}

const customerColumns = `id, uuid, first_name, last_name, email, phone, external_id, street, city, postal_code, state, country,
	metadata, created_at, updated_at`

func scanCustomer(row interface{ Scan(...any) error }) (Customer, error) {
	var (
		c                Customer
		meta             string
		created, updated int64
	)
	if err := row.Scan(&c.id, &c.UUID, &c.FirstName, &c.LastName, &c.Email, &c.Phone, &c.ExternalID, &c.Street, &c.City,
		&c.PostalCode, &c.State, &c.Country, &meta, &created, &updated); err != nil {
		return Customer{}, err
	}
	if err := json.Unmarshal([]byte(meta), &c.Metadata); err != nil {
		return Customer{}, fmt.Errorf("customer %s metadata: %w", c.UUID, err)
	}
	c.CreatedAt, c.UpdatedAt = clock.Time{T: clock.FromMillis(created)}, clock.Time{T: clock.FromMillis(updated)}
	return c, nil
}

// customerByUUID finds the merchant's customer; another merchant's is not
// found, exactly like one that does not exist.
func customerByUUID(ctx context.Context, q store.Querier, merchantID, uuid string, forUpdate bool) (Customer, error) {
	query := `SELECT ` + customerColumns + ` FROM customers WHERE merchant_id = $1 AND uuid = $2`
	if tx, ok := q.(*store.Tx); ok && forUpdate {
		query += tx.DB().ForUpdate()
	}
	c, err := scanCustomer(q.QueryRowContext(ctx, query, merchantID, strings.TrimSpace(uuid)))
	if errors.Is(err, sql.ErrNoRows) {
		return Customer{}, fault.NotFoundf("no customer %s", uuid)
	}
	if err != nil {
		return Customer{}, fmt.Errorf("customer %s: %w", uuid, err)
	}
	return c, nil
}
