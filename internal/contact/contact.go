// Package contact keeps a merchant's contacts (the payers and payees it
// knows by email), their KYC documents and status, the identity-verification
// links sent to them, and the merchant's customers.
package contact

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Service manages contacts, KYC and customers.
type Service struct {
	db       *store.DB
	clock    merchant.Clock
	log      *slog.Logger
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	// PublicURL is the base of the verification links payd sends.
	PublicURL string
	// LinkLifetime is how long a verification link stays valid (7 days).
	LinkLifetime time.Duration
	// outbox delivers verification messages (Deliver); nil keeps them in
	// the outbox only, as the sandbox does without a sender.
	outbox *outbox
}

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Clock    merchant.Clock
	Log      *slog.Logger
	Webhooks *webhook.Dispatcher
	Policy   webhook.Policy
	// PublicURL is the base of the verification links payd sends.
	PublicURL string
}

// NewService returns a Service.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, clock: d.Clock, log: d.Log, webhooks: d.Webhooks, policy: d.Policy, PublicURL: d.PublicURL,
		LinkLifetime: 7 * 24 * time.Hour}
}

// KYCStatus is where a contact's identity verification stands.
type KYCStatus string

const (
	KYCNone     KYCStatus = ""
	KYCPending  KYCStatus = "pending"
	KYCApproved KYCStatus = "approved"
	KYCFailed   KYCStatus = "failed"
)

// MarshalJSON writes KYCNone as "none", so kyc_status is always a string.
func (k KYCStatus) MarshalJSON() ([]byte, error) {
	if k == KYCNone {
		return []byte(`"none"`), nil
	}
	return []byte(`"` + string(k) + `"`), nil
}

// Type of a contact.
type Type string

const (
	Individual   Type = "individual"
	Organization Type = "organization"
)

// Genders a contact may give.
const (
	Male   = "male"
	Female = "female"
)

// Error codes of this package.
const (
	CodeContactExists  = "CONTACT_EXISTS"
	CodeCustomerExists = "CUSTOMER_EXISTS"
)

// errBlankEmail is the contract's exact answer to a contact update without
// an email (CONTRACT §8): no fields member, this message.
var errBlankEmail = &fault.Error{Kind: fault.Invalid, Code: fault.CodeValidation, Message: "Email can't be blank"}

// Contact is a contact as the API returns it (the detail endpoint, lists and
// KYC webhooks).
type Contact struct {
	id         int64
	UUID       string      `json:"uuid"`
	Email      string      `json:"email" doc:"Identifies the contact within the merchant (case-insensitive)."`
	FirstName  string      `json:"first_name"`
	LastName   string      `json:"last_name"`
	Type       Type        `json:"type" enum:"individual,organization"`
	DOB        string      `json:"dob" doc:"Date of birth, yyyy-mm-dd; empty when not given."`
	RegNo      string      `json:"reg_no" doc:"Registration number (organizations)."`
	Phone      string      `json:"phone"`
	Gender     string      `json:"gender" doc:"male, female, or empty when not given."`
	Street     string      `json:"street"`
	City       string      `json:"city"`
	PostalCode string      `json:"postal_code"`
	State      string      `json:"state" doc:"State, province or county."`
	Country    string      `json:"country" doc:"ISO 3166-1 alpha-2."`
	KYCStatus  KYCStatus   `json:"kyc_status" enum:"none,pending,approved,failed" doc:"none until KYC documents are submitted; pending while they are reviewed; then approved or failed."`
	VerifiedAt *clock.Time `json:"verified_at" doc:"When the contact confirmed their identity on the hosted verification page; null until then."`
	CreatedAt  clock.Time  `json:"created_at"`
	UpdatedAt  clock.Time  `json:"updated_at"`
}

// NewContact is the body of POST /v2/contacts.
type NewContact struct {
	Email      string `json:"email" doc:"Required. Unique within the merchant, case-insensitive; at most 254 characters."`
	FirstName  string `json:"first_name" doc:"Required, at most 100 characters."`
	LastName   string `json:"last_name" doc:"Required, at most 100 characters."`
	Type       string `json:"type,omitempty" enum:"individual,organization" doc:"Default individual."`
	DOB        string `json:"dob,omitempty" doc:"Date of birth, yyyy-mm-dd, from 1900-01-01 to today."`
	RegNo      string `json:"reg_no,omitempty" doc:"Registration number, at most 64 characters. Required when type is organization."`
	Phone      string `json:"phone,omitempty" doc:"6 to 15 digits, optionally starting with + and grouped with spaces, hyphens or brackets. Needed for resend_to phone."`
	Gender     string `json:"gender,omitempty" enum:"male,female"`
	Street     string `json:"street,omitempty" doc:"At most 200 characters."`
	City       string `json:"city,omitempty" doc:"At most 100 characters."`
	PostalCode string `json:"postal_code,omitempty" doc:"At most 16 letters, digits, spaces or hyphens."`
	State      string `json:"state,omitempty" doc:"State, province or county; at most 100 characters."`
	Country    string `json:"country,omitempty" doc:"ISO 3166-1 alpha-2 (either case; kept upper case)."`
}

// ContactChanges is the body of PUT /v2/contact/update_info: email finds the
// contact; every other member that is present (and not null) replaces the
// stored value, and absent members keep theirs.
type ContactChanges struct {
	Email      string  `json:"email" doc:"Identifies the contact (case-insensitive). It cannot be changed."`
	FirstName  *string `json:"first_name,omitempty"`
	LastName   *string `json:"last_name,omitempty"`
	Type       *string `json:"type,omitempty" enum:"individual,organization"`
	DOB        *string `json:"dob,omitempty" doc:"yyyy-mm-dd; an empty string clears it."`
	RegNo      *string `json:"reg_no,omitempty"`
	Phone      *string `json:"phone,omitempty"`
	Gender     *string `json:"gender,omitempty" enum:"male,female"`
	Street     *string `json:"street,omitempty"`
	City       *string `json:"city,omitempty"`
	PostalCode *string `json:"postal_code,omitempty"`
	State      *string `json:"state,omitempty"`
	Country    *string `json:"country,omitempty"`
}

func (n NewContact) contact() Contact {
	return Contact{Email: n.Email, FirstName: n.FirstName, LastName: n.LastName, Type: Type(n.Type), DOB: n.DOB,
		RegNo: n.RegNo, Phone: n.Phone, Gender: n.Gender, Street: n.Street, City: n.City, PostalCode: n.PostalCode,
		State: n.State, Country: n.Country}
}

// apply writes the present members of ch over c.
func (ch ContactChanges) apply(c *Contact) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.FirstName, ch.FirstName)
	set(&c.LastName, ch.LastName)
	if ch.Type != nil {
		c.Type = Type(*ch.Type)
	}
	set(&c.DOB, ch.DOB)
	set(&c.RegNo, ch.RegNo)
	set(&c.Phone, ch.Phone)
	set(&c.Gender, ch.Gender)
	set(&c.Street, ch.Street)
	set(&c.City, ch.City)
	set(&c.PostalCode, ch.PostalCode)
	set(&c.State, ch.State)
	set(&c.Country, ch.Country)
}

// earliestDOB bounds a date of birth from below.
var earliestDOB = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// validate checks and normalises every member of c; today is the merchant's
// date (a date of birth may not be later).
func (c *Contact) validate(today time.Time) error {
	f := fault.Fields{}
	email(f, "email", &c.Email, true)
	text(f, "first_name", &c.FirstName, maxNameLen, true)
	text(f, "last_name", &c.LastName, maxNameLen, true)
	typ := string(c.Type)
	if typ == "" {
		typ = string(Individual)
	}
	oneOf(f, "type", &typ, true, string(Individual), string(Organization))
	c.Type = Type(typ)
	if dob := date(f, "dob", &c.DOB, false); !dob.IsZero() && (dob.Before(earliestDOB) || dob.After(day(today))) {
		f.Add("dob", "must be from 1900-01-01 to today")
	}
	// The spec's Contact table: reg_no is required when type is organization.
	text(f, "reg_no", &c.RegNo, maxRegNoLen, c.Type == Organization)
	phone(f, "phone", &c.Phone)
	oneOf(f, "gender", &c.Gender, false, Male, Female)
	text(f, "street", &c.Street, maxStreetLen, false)
	text(f, "city", &c.City, maxCityLen, false)
	postalCode(f, "postal_code", &c.PostalCode)
	text(f, "state", &c.State, maxStateLen, false)
	country(f, "country", &c.Country, false)
	return f.Err()
}

func contactExists(email string) error {
	return fault.New(fault.Conflict, CodeContactExists, "a contact with email %s already exists", email)
}

func noContact(email string) error {
	return fault.NotFoundf("no contact with email %s", email)
}

// Create adds a contact. The email is unique within the merchant whatever
// its case: a second contact with it is refused (409 CONTACT_EXISTS).
func (s *Service) Create(ctx context.Context, tx *store.Tx, p merchant.Principal, in NewContact) (Contact, error) {
	now := s.clock.Of(p)
	c := in.contact()
	if err := c.validate(now); err != nil {
		return Contact{}, err
	}
	c.CreatedAt, c.UpdatedAt = clock.Time{T: now}, clock.Time{T: now}
	_, err := contactByEmail(ctx, tx, p.MerchantID, c.Email, false)
	if err == nil {
		return Contact{}, contactExists(c.Email)
	}
	if !fault.Is(err, fault.CodeNotFound) {
		return Contact{}, err
	}
	c.UUID, err = store.InsertWithID(ctx, store.UUIDLen, func(uuid string) (bool, error) {
		return store.OneRow(tx.ExecContext(ctx, `INSERT INTO contacts (uuid, merchant_id, email, email_key, first_name, last_name,
			type, dob, reg_no, phone, gender, street, city, postal_code, state, country, kyc_status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, '', $17, $17)
			ON CONFLICT (merchant_id, uuid) DO NOTHING`,
			uuid, p.MerchantID, c.Email, emailKey(c.Email), c.FirstName, c.LastName, string(c.Type), c.DOB, c.RegNo,
			c.Phone, c.Gender, c.Street, c.City, c.PostalCode, c.State, c.Country, now.UnixMilli()))
	})
	if store.IsUniqueViolation(err) {
		// A concurrent create of the same email committed first.
		return Contact{}, contactExists(c.Email)
	}
	if err != nil {
		return Contact{}, fmt.Errorf("create contact: %w", err)
	}
	return c, nil
}

// Detail returns the merchant's contact with email (case-insensitive).
func (s *Service) Detail(ctx context.Context, p merchant.Principal, email string) (Contact, error) {
	if err := emailParam(email); err != nil {
		return Contact{}, err
	}
	return contactByEmail(ctx, s.db.Read(), p.MerchantID, email, false)
}

// emailParam checks the email that finds a contact.
func emailParam(email string) error {
	f := fault.Fields{}
	text(f, "email", &email, maxEmailLen, true)
	return f.Err()
}

// UpdateInfo changes the members of a contact that ch carries (PUT
// /v2/contact/update_info, deprecated). A blank email is the contract's exact
// 422; an email no contact of the merchant has is 404.
func (s *Service) UpdateInfo(ctx context.Context, tx *store.Tx, p merchant.Principal, ch ContactChanges) (Contact, error) {
	if emailKey(ch.Email) == "" {
		return Contact{}, errBlankEmail
	}
	if err := emailParam(ch.Email); err != nil {
		return Contact{}, err
	}
	now := s.clock.Of(p)
	c, err := contactByEmail(ctx, tx, p.MerchantID, ch.Email, true)
	if err != nil {
		return Contact{}, err
	}
	ch.apply(&c)
	if err := c.validate(now); err != nil {
		return Contact{}, err
	}
	c.UpdatedAt = clock.Time{T: now}
	if _, err := tx.ExecContext(ctx, `UPDATE contacts SET first_name = $1, last_name = $2, type = $3, dob = $4, reg_no = $5,
		phone = $6, gender = $7, street = $8, city = $9, postal_code = $10, state = $11, country = $12, updated_at = $13
		WHERE id = $14 AND merchant_id = $15`,
		c.FirstName, c.LastName, string(c.Type), c.DOB, c.RegNo, c.Phone, c.Gender, c.Street, c.City, c.PostalCode,
		c.State, c.Country, now.UnixMilli(), c.id, p.MerchantID); err != nil {
		return Contact{}, fmt.Errorf("update contact %s: %w", c.UUID, err)
	}
	return c, nil
}

// ListQuery selects a page of a list (CONTRACT §3 page lists).
type ListQuery struct {
	// Page counts from 1; PerPage is the page size.
	Page, PerPage int
	// From (inclusive) and To (exclusive) bound created_at when set.
	From, To time.Time
	// Email and ExternalID filter customers (exact; email case-insensitive).
	Email, ExternalID string
}

// Listed is one page of records and how many there are in all.
type Listed[T any] struct {
	Records []T
	Total   int
}

// List returns a page of the merchant's contacts, newest first.
func (s *Service) List(ctx context.Context, p merchant.Principal, lq ListQuery) (Listed[Contact], error) {
	w := newWhere(p.MerchantID, lq)
	return list(ctx, s.db.Read(), "contacts", contactColumns, w, lq, scanContact)
}

// Standing is what a payin needs to know about a contact.
type Standing struct {
	Exists bool
	KYC    KYCStatus
}

// Standing reports whether merchantID has a contact with email
// (case-insensitive) and where its KYC stands. Payin methods that require a
// contact (or its KYC) call it inside their transaction.
func (s *Service) Standing(ctx context.Context, q store.Querier, merchantID, email string) (Standing, error) {
	var status string
	err := q.QueryRowContext(ctx, `SELECT kyc_status FROM contacts WHERE merchant_id = $1 AND email_key = $2`,
		merchantID, emailKey(email)).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return Standing{}, nil
	}
	if err != nil {
		return Standing{}, fmt.Errorf("contact standing: %w", err)
	}
	return Standing{Exists: true, KYC: KYCStatus(status)}, nil
}

const contactColumns = `id, uuid, email, first_name, last_name, type, dob, reg_no, phone, gender, street, city,
	postal_code, state, country, kyc_status, verified_at, created_at, updated_at`

func scanContact(row interface{ Scan(...any) error }) (Contact, error) {
	var (
		c                Contact
		verified         sql.NullInt64
		created, updated int64
		typ, kyc         string
	)
	err := row.Scan(&c.id, &c.UUID, &c.Email, &c.FirstName, &c.LastName, &typ, &c.DOB, &c.RegNo, &c.Phone, &c.Gender,
		&c.Street, &c.City, &c.PostalCode, &c.State, &c.Country, &kyc, &verified, &created, &updated)
	if err != nil {
		return Contact{}, err
	}
	c.Type, c.KYCStatus = Type(typ), KYCStatus(kyc)
	if verified.Valid {
		c.VerifiedAt = &clock.Time{T: clock.FromMillis(verified.Int64)}
	}
	c.CreatedAt, c.UpdatedAt = clock.Time{T: clock.FromMillis(created)}, clock.Time{T: clock.FromMillis(updated)}
	return c, nil
}

// contactByEmail finds the merchant's contact by email, whatever its case;
// forUpdate locks it for the rest of a write transaction. Another merchant's
// contact is not found, exactly like one that does not exist.
func contactByEmail(ctx context.Context, q store.Querier, merchantID, email string, forUpdate bool) (Contact, error) {
	query := `SELECT ` + contactColumns + ` FROM contacts WHERE merchant_id = $1 AND email_key = $2`
	if tx, ok := q.(*store.Tx); ok && forUpdate {
		query += tx.DB().ForUpdate()
	}
	c, err := scanContact(q.QueryRowContext(ctx, query, merchantID, emailKey(email)))
	if errors.Is(err, sql.ErrNoRows) {
		return Contact{}, noContact(email)
	}
	if err != nil {
		return Contact{}, fmt.Errorf("contact by email: %w", err)
	}
	return c, nil
}
