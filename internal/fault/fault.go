// Package fault is the error vocabulary every domain package answers in: a
// kind (which Status maps to an HTTP status code, the one mapping the API
// and the pages share), a stable
// UPPER_SNAKE code for machines, a message for people, and, for validation
// failures, the JSON members that are wrong.
package fault

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Kind says what went wrong in terms a client can act on.
type Kind int

const (
	// Invalid: the request breaks a rule of the spec (422).
	Invalid Kind = iota + 1
	// Malformed: the request cannot be read at all (400).
	Malformed
	// NotFound: no such record, or not the caller's (404).
	NotFound
	// Conflict: the record's state does not allow this, or a racing request won (409).
	Conflict
	// Forbidden: the caller's role may not do this (403).
	Forbidden
	// Unauthenticated: missing or bad credentials (401).
	Unauthenticated
	// TooLarge: a body or file is over its bound (413).
	TooLarge
	// UnsupportedMedia: wrong content type (415).
	UnsupportedMedia
	// RateLimited: too many requests (429).
	RateLimited
	// Busy: the work asked for is still running; retry later (503).
	Busy
)

// statusOfKind is each kind's HTTP status.
var statusOfKind = map[Kind]int{
	Invalid:          http.StatusUnprocessableEntity,
	Malformed:        http.StatusBadRequest,
	NotFound:         http.StatusNotFound,
	Conflict:         http.StatusConflict,
	Forbidden:        http.StatusForbidden,
	Unauthenticated:  http.StatusUnauthorized,
	TooLarge:         http.StatusRequestEntityTooLarge,
	UnsupportedMedia: http.StatusUnsupportedMediaType,
	RateLimited:      http.StatusTooManyRequests,
	Busy:             http.StatusServiceUnavailable,
}

// Status is the HTTP status of an error of kind k: the one place where
// domain errors meet HTTP, for the API's JSON errors and the pages' HTML
// ones alike (a refused field is 422 on both, CONTRACT §16). A kind it does
// not know is a bug: 500.
func Status(k Kind) int {
	if s, ok := statusOfKind[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// StatusOf is the HTTP status of err: its kind's when it is an *Error, else
// 500 (an error that is not a domain error is a bug or an outage).
func StatusOf(err error) int {
	if e, ok := As(err); ok {
		return Status(e.Kind)
	}
	return http.StatusInternalServerError
}

// Stable error codes shared by several packages. Packages define their own
// codes beside the rule they enforce.
const (
	CodeValidation        = "VALIDATION_FAILED"
	CodeNotFound          = "NOT_FOUND"
	CodeInvalidState      = "INVALID_STATE"
	CodeBadRequest        = "BAD_REQUEST"
	CodeRequireLogin      = "REQUIRE_LOGIN"
	CodeAmountOutOfRange  = "AMOUNT_OUT_OF_RANGE"
	CodeCurrency          = "CURRENCY_NOT_SUPPORTED"
	CodeInsufficientFunds = "INSUFFICIENT_FUNDS"
	// CodeMethodNotEnabled refuses a method the account does not offer
	// (payins, payouts and payin links alike), or one of another currency
	// than the request's (CONTRACT §16).
	CodeMethodNotEnabled = "METHOD_NOT_ENABLED"
	// CodeAlreadyExists is the 409 of a create that repeats a unique key;
	// its message names the existing record (CONTRACT §16).
	CodeAlreadyExists    = "ALREADY_EXISTS"
	CodeForbidden        = "FORBIDDEN"
	CodeTooLarge         = "TOO_LARGE"
	CodeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE"
	CodeRateLimited      = "RATE_LIMITED"
	CodeInternal         = "INTERNAL"
	CodeUnavailable      = "SERVICE_UNAVAILABLE"
)

// Error is a domain error with a stable code.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Fields maps a request's JSON member names to what is wrong with each.
	Fields map[string]string
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return e.Code + ": " + e.Message
	}
	return e.Code + ": " + e.Message + " (" + e.fieldList() + ")"
}

func (e *Error) fieldList() string {
	names := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + ": " + e.Fields[k]
	}
	return strings.Join(parts, "; ")
}

// New returns an error of kind with code and a formatted message.
func New(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Rule is a broken rule of the spec: 422 with code.
func Rule(code, format string, args ...any) *Error {
	return New(Invalid, code, format, args...)
}

// NotFoundf is a 404 for a record the caller cannot see.
func NotFoundf(format string, args ...any) *Error {
	return New(NotFound, CodeNotFound, format, args...)
}

// State is a 409 INVALID_STATE: the record's state does not allow the action.
func State(format string, args ...any) *Error {
	return New(Conflict, CodeInvalidState, format, args...)
}

// Field is a 422 VALIDATION_FAILED naming one member.
func Field(name, problem string) *Error {
	return &Error{Kind: Invalid, Code: CodeValidation, Message: name + " " + problem, Fields: map[string]string{name: problem}}
}

// Fields collects validation problems member by member; its Err is nil when
// nothing was added, so a validator can add freely and return v.Err().
type Fields map[string]string

// Add records a problem with member name (the first problem per member wins).
func (f Fields) Add(name, problem string) {
	if _, ok := f[name]; !ok {
		f[name] = problem
	}
}

// AddErr adds the members a validation error names (one of Field or of
// Fields.Err); nil, or an error that names no member, adds nothing.
func (f Fields) AddErr(err error) {
	if e, ok := As(err); ok {
		for k, v := range e.Fields {
			f.Add(k, v)
		}
	}
}

// Err returns the collected problems as one VALIDATION_FAILED error, or nil.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	e := &Error{Kind: Invalid, Code: CodeValidation, Fields: map[string]string(f)}
	if len(f) == 1 {
		for k, v := range f {
			e.Message = k + " " + v
		}
	} else {
		e.Message = "the request has invalid members: " + e.fieldList()
	}
	return e
}

// As returns err as an *Error when it is one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Is reports whether err carries code.
func Is(err error, code string) bool {
	e, ok := As(err)
	return ok && e.Code == code
}
