package bankfile

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/store"
)

// File is a bank file as payd bankfile list --json shows it (CONTRACT §25).
type File struct {
	Name          string `json:"name"`
	Rail          string `json:"rail"`
	FileReference string `json:"file_reference"`
	SHA256        string `json:"sha256"`
	Size          int64  `json:"size"`
	Count         int    `json:"count"`
	// Total is the sum of the transfers' amounts, a decimal in the file's
	// currency.
	Total       money.String `json:"total"`
	Currency    string       `json:"currency"`
	Status      Status       `json:"status"`
	CutoffAt    clock.Time   `json:"cutoff_at"`
	DeliveredAt *clock.Time  `json:"delivered_at"`
}

// Shown is a bank file with its transfers (payd bankfile show --json).
type Shown struct {
	File
	Transfers []Transfer `json:"transfers"`
	// Attempts and LastError say how its delivery goes (its text shows
	// them; §25's shape has no member for them).
	Attempts  int    `json:"-"`
	LastError string `json:"-"`
}

// Transfer is one transfer of a bank file, named by its merchant and uuid
// (CONTRACT §25).
type Transfer struct {
	BankReference string       `json:"bank_reference"`
	Type          TransferType `json:"type"`
	MerchantID    string       `json:"merchant_id"`
	UUID          string       `json:"uuid"`
	Amount        money.String `json:"amount"`
	// Status is the transfer's own: pending, done or failed for a payout
	// transaction, processing, completed or failed for a settlement or a
	// transfer.
	Status string `json:"status"`
}

// TransferType is what kind of record a bank file's transfer is.
type TransferType string

const (
	PayoutTransaction TransferType = "payout_transaction"
	Settlement        TransferType = "settlement"
	ExternalTransfer  TransferType = "transfer"
)

// The key prefixes of settlements' and transfers' rail transfers (package
// settlement's and transfer's keyPrefix); a payout transaction's key is its
// uuid.
const (
	settlementPrefix = "stl_"
	transferPrefix   = "trf_"
)

// recordOf is the kind and uuid of the record a rail transfer's key names.
func recordOf(key string) (TransferType, string) {
	switch {
	case strings.HasPrefix(key, settlementPrefix):
		return Settlement, strings.TrimPrefix(key, settlementPrefix)
	case strings.HasPrefix(key, transferPrefix):
		return ExternalTransfer, strings.TrimPrefix(key, transferPrefix)
	}
	return PayoutTransaction, key
}

const fileColumns = `name, rail, file_reference, sha256, size, count, total, currency, status, cutoff_at, delivered_at, attempts, last_error`

func scanFile(sc store.Row) (Shown, error) {
	var (
		s               Shown
		total, cutoffAt int64
		deliveredAt     sql.NullInt64
	)
	err := sc.Scan(&s.Name, &s.Rail, &s.FileReference, &s.SHA256, &s.Size, &s.Count, &total, &s.Currency, &s.Status, &cutoffAt,
		&deliveredAt, &s.Attempts, &s.LastError)
	if err != nil {
		return Shown{}, err
	}
	c, err := money.Lookup(s.Currency)
	if err != nil {
		return Shown{}, fmt.Errorf("bank file %s: %w", s.Name, err)
	}
	s.Total = money.StringOf(total, c)
	s.CutoffAt = clock.Time{T: clock.FromMillis(cutoffAt)}
	if deliveredAt.Valid {
		s.DeliveredAt = &clock.Time{T: clock.FromMillis(deliveredAt.Int64)}
	}
	return s, nil
}

// maxListed bounds payd bankfile list: the newest files.
const maxListed = 1000

// ListFiles is the bank files, newest cut-off first (at most maxListed).
func ListFiles(ctx context.Context, q store.Querier) ([]File, error) {
	// global lookup: bank_files are operator records, no merchant's.
	rows, err := q.QueryContext(ctx, `SELECT `+fileColumns+` FROM bank_files ORDER BY cutoff_at DESC, name DESC`+store.Limit(maxListed))
	if err != nil {
		return nil, fmt.Errorf("list bank files: %w", err)
	}
	defer rows.Close()
	out := []File{}
	for rows.Next() {
		s, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s.File)
	}
	return out, rows.Err()
}

// ShowFile is the bank file name with its transfers, in the file's order
// (by bank reference), each with its record's status now.
func ShowFile(ctx context.Context, q store.Querier, name string) (Shown, error) {
	// global lookup: bank_files are operator records, no merchant's.
	s, err := scanFile(q.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM bank_files WHERE name = $1`, name))
	if store.IsNoRows(err) {
		return Shown{}, fault.NotFoundf("no bank file %s", name)
	}
	if err != nil {
		return Shown{}, fmt.Errorf("read bank file %s: %w", name, err)
	}
	c, err := money.Lookup(s.Currency)
	if err != nil {
		return Shown{}, err
	}
	// spans merchants: a file holds every merchant's transfers of its cut-off.
	rows, err := q.QueryContext(ctx, `SELECT merchant_id, key, bank_reference, amount FROM rail_submissions WHERE bank_file = $1
		ORDER BY bank_reference`, name)
	if err != nil {
		return Shown{}, fmt.Errorf("read the transfers of %s: %w", name, err)
	}
	type row struct {
		merchantID, key, ref string
		amount               int64
	}
	var list []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.merchantID, &r.key, &r.ref, &r.amount); err != nil {
			rows.Close()
			return Shown{}, err
		}
		list = append(list, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Shown{}, err
	}
	s.Transfers = []Transfer{}
	for _, r := range list {
		typ, uuid := recordOf(r.key)
		status, err := recordStatus(ctx, q, typ, r.merchantID, uuid)
		if err != nil {
			return Shown{}, err
		}
		s.Transfers = append(s.Transfers, Transfer{BankReference: r.ref, Type: typ, MerchantID: r.merchantID, UUID: uuid,
			Amount: money.StringOf(r.amount, c), Status: status})
	}
	return s, nil
}

// recordStatus is the status of the record a file's transfer is.
func recordStatus(ctx context.Context, q store.Querier, typ TransferType, merchantID, uuid string) (string, error) {
	var status string
	var err error
	switch typ {
	case Settlement:
		err = q.QueryRowContext(ctx, `SELECT status FROM settlements WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID).Scan(&status)
	case ExternalTransfer:
		err = q.QueryRowContext(ctx, `SELECT status FROM transfers WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID).Scan(&status)
	default:
		err = q.QueryRowContext(ctx, `SELECT status FROM payout_transactions WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID).Scan(&status)
	}
	if err != nil {
		return "", fmt.Errorf("read the status of %s %s: %w", typ, uuid, err)
	}
	return status, nil
}

// FileContent is the bank file name's bytes, as they were written.
func FileContent(ctx context.Context, q store.Querier, name string) ([]byte, error) {
	var content []byte
	// global lookup: bank_files are operator records, no merchant's.
	err := q.QueryRowContext(ctx, `SELECT content FROM bank_files WHERE name = $1`, name).Scan(&content)
	if store.IsNoRows(err) {
		return nil, fault.NotFoundf("no bank file %s", name)
	}
	if err != nil {
		return nil, fmt.Errorf("read bank file %s: %w", name, err)
	}
	return content, nil
}
