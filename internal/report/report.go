// Package report makes and serves settlement reports (CONTRACT §12): for
// every payments account, a daily and a monthly CSV of its balance records,
// made once at 09:00 in the merchant's time zone, with a summary of the
// period's settlements and the closing balance. A report's bytes are
// written once with their SHA-256 and never change; they are fetched
// through pre-signed links that expire after three minutes.
package report

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// EventCreated is the webhook event of a new report (CONTRACT §16).
const EventCreated = "report.created"

// Service makes, lists and serves reports.
type Service struct {
	db        *store.DB
	queue     *job.Queue
	clock     merchant.Clock
	log       *slog.Logger
	webhooks  *webhook.Dispatcher
	publicURL string
}

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Queue    *job.Queue
	Clock    merchant.Clock
	Log      *slog.Logger
	Webhooks *webhook.Dispatcher
	// PublicURL is the base of the file links ({public_url}).
	PublicURL string
}

// NewService returns the service with its job registered, after making
// sure a signing key exists.
func NewService(ctx context.Context, d Deps) (*Service, error) {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, log: d.Log, webhooks: d.Webhooks, publicURL: strings.TrimRight(d.PublicURL, "/")}
	if err := ensureKey(ctx, d.DB, d.Clock.System()); err != nil {
		return nil, err
	}
	job.Register(d.Queue, jobMake, s.makeJob)
	return s, nil
}

// Report is a report as GET /v2/reports/settlements lists it and its
// report.created webhook carries it.
type Report struct {
	ID              string     `json:"id" doc:"The report's id: 8 upper-case base-36 characters."`
	ReportFrequency Frequency  `json:"report_frequency" enum:"daily,monthly"`
	Currency        string     `json:"currency" doc:"The payments account's currency."`
	PeriodStart     clock.Time `json:"period_start" doc:"Inclusive: 09:00 local time in the merchant's time zone (on the 1st for monthly reports)."`
	PeriodEnd       clock.Time `json:"period_end" doc:"Exclusive: the next 09:00 local time (the next month's 1st for monthly reports); 23 or 25 hours after period_start across a daylight-saving change."`
	FileName        string     `json:"file_name" example:"settlement_report_daily_AUD_2026-10-04.csv"`
	FileSize        int64      `json:"file_size" doc:"Bytes."`
	ContentType     string     `json:"content_type" example:"text/csv"`
	SHA256          string     `json:"sha256" doc:"Hex SHA-256 of the file, which never changes."`
	CreatedAt       clock.Time `json:"created_at"`
	Summary         Summary    `json:"summary"`
	FileURL         *string    `json:"file_url" doc:"A link to the CSV, signed for this answer and valid 3 minutes on the merchant's clock: fetch it with a plain GET, no headers. Altered or expired links answer 403 LINK_INVALID. null in the report.created webhook: list the reports for a link."`
}

// Summary is a report's summary (CONTRACT §12).
type Summary struct {
	SettlementCount  int64        `json:"settlement_count" doc:"Settlements submitted in the period that had not failed by its end."`
	SettledAmount    money.Number `json:"settled_amount" doc:"Their amounts."`
	SettledFee       money.Number `json:"settled_fee" doc:"Their fees."`
	ClosingBalance   money.Number `json:"closing_balance" doc:"The available balance at period_end."`
	ClosingBalanceAt clock.Time   `json:"closing_balance_at" doc:"period_end."`
}

// stored is a report row without its bytes.
type stored struct {
	id, merchantID, currency, fileName, contentType, sha256 string
	cur                                                     money.Currency
	accountID, fileSize                                     int64
	frequency                                               Frequency
	start, end, createdAt                                   int64
	totals                                                  totals
}

const storedColumns = `id, merchant_id, currency, file_name, content_type, sha256, account_id, length(content), frequency,
	period_start, period_end, created_at, settlement_count, settled_amount, settled_fee, closing_balance`

func scanStored(sc interface{ Scan(...any) error }) (stored, error) {
	var r stored
	err := sc.Scan(&r.id, &r.merchantID, &r.currency, &r.fileName, &r.contentType, &r.sha256, &r.accountID, &r.fileSize, &r.frequency,
		&r.start, &r.end, &r.createdAt, &r.totals.settlementCount, &r.totals.settledAmount, &r.totals.settledFee, &r.totals.closingBalance)
	if err != nil {
		return r, err
	}
	if r.cur, err = money.Lookup(r.currency); err != nil {
		return r, fmt.Errorf("report %s: %w", r.id, err)
	}
	return r, nil
}

// view is r as the API shows it, without a link.
func (r stored) view() Report {
	c := r.cur
	end := clock.Time{T: clock.FromMillis(r.end)}
	return Report{ID: r.id, ReportFrequency: r.frequency, Currency: r.currency, PeriodStart: clock.Time{T: clock.FromMillis(r.start)}, PeriodEnd: end,
		FileName: r.fileName, FileSize: r.fileSize, ContentType: r.contentType, SHA256: r.sha256, CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)},
		Summary: Summary{SettlementCount: r.totals.settlementCount, SettledAmount: money.NumberOf(r.totals.settledAmount, c),
			SettledFee: money.NumberOf(r.totals.settledFee, c), ClosingBalance: money.NumberOf(r.totals.closingBalance, c), ClosingBalanceAt: end}}
}

// List bounds (CONTRACT §3).
const (
	DefaultSize = 20
	MaxSize     = 100
)

// ListQuery selects a page of an account's reports, latest period first.
type ListQuery struct {
	// Currency selects the payments account; empty: the caller's.
	Currency string
	// Frequency is daily or monthly; empty: both.
	Frequency string
	// Cursor continues a previous page (its next_cursor).
	Cursor string
	// Size is 1 to MaxSize; 0 means DefaultSize.
	Size int
}

// Page is one page of reports.
type Page struct {
	Records    []Report `json:"records"`
	NextCursor *string  `json:"next_cursor" doc:"Pass as cursor to get the next page; null on the last page."`
	HasMore    bool     `json:"has_more"`
}

// List is a page of the caller's reports, latest period first, each with a
// link freshly signed on the caller's clock.
func (s *Service) List(ctx context.Context, p merchant.Principal, lq ListQuery) (Page, error) {
	f := fault.Fields{}
	freq, ok := parseFrequency(lq.Frequency)
	if !ok && lq.Frequency != "" {
		f.Add("report_frequency", "must be daily or monthly")
	}
	if lq.Size == 0 {
		lq.Size = DefaultSize
	}
	if lq.Size < 1 || lq.Size > MaxSize {
		f.Add("size", fmt.Sprintf("must be an integer from 1 to %d", MaxSize))
	}
	afterAt, afterID, cursorOK := decodeCursor(lq.Cursor)
	if !cursorOK {
		f.Add("cursor", "is not a cursor this endpoint returned")
	}
	if err := f.Err(); err != nil {
		return Page{}, err
	}
	currency := p.Currency
	if lq.Currency != "" {
		currency = strings.ToUpper(lq.Currency)
	}
	acc, err := merchant.AccountByCurrency(ctx, s.db.Read(), p.MerchantID, merchant.Payments, currency)
	if err != nil {
		return Page{}, err
	}
	rows, err := s.db.Read().QueryContext(ctx, `SELECT `+storedColumns+` FROM reports
		WHERE merchant_id = $1 AND account_id = $2 AND ($3 = '' OR frequency = $3)
		  AND (period_end < $4 OR (period_end = $4 AND id < $5))
		ORDER BY period_end DESC, id DESC LIMIT $6`, p.MerchantID, acc.ID, string(freq), afterAt, afterID, lq.Size+1)
	if err != nil {
		return Page{}, fmt.Errorf("list reports: %w", err)
	}
	defer rows.Close()
	out := Page{Records: []Report{}}
	var last stored
	for rows.Next() {
		r, err := scanStored(rows)
		if err != nil {
			return Page{}, fmt.Errorf("list reports: %w", err)
		}
		if len(out.Records) == lq.Size {
			out.HasMore = true
			break
		}
		out.Records = append(out.Records, r.view())
		last = r
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("list reports: %w", err)
	}
	if out.HasMore {
		c := encodeCursor(last.end, last.id)
		out.NextCursor = &c
	}
	return out, s.signAll(ctx, p.MerchantID, s.clock.Of(p), out.Records)
}

// signAll gives each report a link valid for LinkTTL from now.
func (s *Service) signAll(ctx context.Context, merchantID string, now time.Time, reports []Report) error {
	if len(reports) == 0 {
		return nil
	}
	k, err := currentKey(ctx, s.db.Read())
	if err != nil {
		return err
	}
	for i := range reports {
		u := sign(s.publicURL, k, merchantID, reports[i].ID, now.Add(LinkTTL))
		reports[i].FileURL = &u
	}
	return nil
}

func encodeCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + ":" + id))
}

// decodeCursor reads a cursor (the period end and id of the last report
// of a page); the empty cursor starts at the latest.
func decodeCursor(c string) (int64, string, bool) {
	if c == "" {
		return 1 << 62, "", true
	}
	if len(c) > 64 {
		return 0, "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", false
	}
	at, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || n < 0 || len(id) != store.UUIDLen {
		return 0, "", false
	}
	return n, id, true
}

// File is a report's file as its link serves it.
type File struct {
	Name        string
	ContentType string
	SHA256      string
	Content     []byte
}

// Open serves the file a signed link names (its query values). Whatever is
// wrong with the link — altered, expired on the merchant's clock, signed by
// a key retired too long ago, naming another merchant's report or none —
// the answer is ErrLink.
func (s *Service) Open(ctx context.Context, query map[string][]string) (File, error) {
	l, err := parseLink(query)
	if err != nil {
		return File{}, err
	}
	q := s.db.Read()
	if err := l.check(ctx, q, s.clock.System()); err != nil {
		return File{}, err
	}
	now, err := s.clock.Read(ctx, q, l.merchantID)
	if fault.Is(err, fault.CodeNotFound) {
		return File{}, ErrLink
	}
	if err != nil {
		return File{}, err
	}
	if now.UnixMilli() > l.expiresMS {
		return File{}, ErrLink
	}
	var f File
	err = q.QueryRowContext(ctx, `SELECT file_name, content_type, sha256, content FROM reports WHERE merchant_id = $1 AND id = $2`,
		l.merchantID, l.reportID).Scan(&f.Name, &f.ContentType, &f.SHA256, &f.Content)
	if errors.Is(err, sql.ErrNoRows) {
		return File{}, ErrLink
	}
	if err != nil {
		return File{}, fmt.Errorf("report %s: %w", l.reportID, err)
	}
	return f, nil
}
