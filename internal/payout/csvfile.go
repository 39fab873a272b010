package payout

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
)

// Bounds of a v1 batch file.
const (
	MaxFileBytes = 1 << 20
	MaxFileRows  = MaxTransactions
)

// fileColumns are the columns a v1 batch file may have, in any order.
var fileColumns = []string{"payee", "email", "amount", "address", "payid", "payid_type", "bsb", "account_number"}

// BatchFile is a parsed v1 batch file: its transactions and the line each
// came from (the header is line 1).
type BatchFile struct {
	Transactions []V1Transaction
	Lines        []int
}

// ParseFile reads a v1 batch file: CSV, UTF-8 with or without a byte-order
// mark, a header row naming the columns (any order; unknown columns are
// refused), then 1 to MaxFileRows transactions. Every problem is reported in
// one 422, each as rows[N].column with N the file's line number.
func ParseFile(data []byte) (BatchFile, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !utf8.Valid(data) {
		return BatchFile{}, fault.Field("file", "must be UTF-8 text")
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return BatchFile{}, fault.Field("file", "is empty: it needs a header row and at least one transaction")
	}
	if err != nil {
		return BatchFile{}, fault.Field("file", "is not CSV: "+err.Error())
	}
	index, err := headerIndex(header)
	if err != nil {
		return BatchFile{}, err
	}
	var out BatchFile
	f := fault.Fields{}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			f.Add(fmt.Sprintf("rows[%d]", line), "is not valid CSV: "+err.Error())
			break
		}
		if len(out.Transactions) == MaxFileRows {
			return BatchFile{}, fault.Field("file", fmt.Sprintf("has more than %d transactions", MaxFileRows))
		}
		if len(record) != len(header) {
			f.Add(fmt.Sprintf("rows[%d]", line), fmt.Sprintf("has %d columns; the header has %d", len(record), len(header)))
			continue
		}
		get := func(col string) string {
			if i, ok := index[col]; ok {
				return strings.TrimSpace(record[i])
			}
			return ""
		}
		t := V1Transaction{Payee: get("payee"), Email: get("email"), Amount: money.Input(get("amount")), Address: get("address"),
			PayID: get("payid"), PayIDType: get("payid_type"), BSB: get("bsb"), AccountNumber: get("account_number")}
		out.Transactions = append(out.Transactions, t)
		out.Lines = append(out.Lines, line)
	}
	if err := f.Err(); err != nil {
		return BatchFile{}, err
	}
	if len(out.Transactions) == 0 {
		return BatchFile{}, fault.Field("file", "has no transactions under its header")
	}
	return out, nil
}

func headerIndex(header []string) (map[string]int, error) {
	index := map[string]int{}
	f := fault.Fields{}
	for i, name := range header {
		name = strings.ToLower(strings.TrimSpace(name))
		_, twice := index[name]
		switch {
		case !slices.Contains(fileColumns, name):
			f.Add("rows[1]", fmt.Sprintf("names column %q; the columns are %s", name, strings.Join(fileColumns, ", ")))
		case twice:
			f.Add("rows[1]", fmt.Sprintf("names column %s twice", name))
		}
		index[name] = i
	}
	for _, need := range []string{"payee", "amount"} {
		if _, ok := index[need]; !ok {
			f.Add("rows[1]", "needs a column "+need)
		}
	}
	return index, f.Err()
}

// ToRows renames an error about a request made from the file
// (payout_transaction_details[i].member) to the file's lines (rows[N].member).
func (b BatchFile) ToRows(err error) error {
	e, ok := fault.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	out := *e
	out.Fields = map[string]string{}
	for k, v := range e.Fields {
		var i int
		var rest string
		if n, _ := fmt.Sscanf(k, "payout_transaction_details[%d]", &i); n == 1 && i >= 0 && i < len(b.Lines) {
			rest = k[strings.IndexByte(k, ']')+1:]
			k = fmt.Sprintf("rows[%d]%s", b.Lines[i], rest)
		}
		out.Fields[k] = v
	}
	if len(out.Fields) == 1 {
		for k, v := range out.Fields {
			out.Message = k + " " + v
		}
	}
	return &out
}

// CreateV1File accepts a v1 payout whose transactions come from a batch file:
// the rules of CreateV1, each problem named by the file's line.
func (s *Service) CreateV1File(ctx context.Context, tx *store.Tx, p merchant.Principal, r V1Request, file BatchFile) (V1Payout, error) {
	r.PayoutTransactionDetails = file.Transactions
	out, err := s.CreateV1(ctx, tx, p, r)
	if err != nil {
		return V1Payout{}, file.ToRows(err)
	}
	return out, nil
}
