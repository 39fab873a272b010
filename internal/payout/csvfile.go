package payout

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/input"
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
// one 422, each as rows[N].column with N the file's line number; a row that
// is not CSV ends the reading, named rows[N] by the line it starts on.
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
		if err != nil {
			f.Add(parseErrorRow(err), "is not valid CSV: "+err.Error())
			break
		}
		line, _ := r.FieldPos(0)
		if len(out.Transactions) == MaxFileRows {
			return BatchFile{}, fault.Field("file", fmt.Sprintf("has more than %d transactions", MaxFileRows))
		}
		if len(record) != len(header) {
			f.Add(fmt.Sprintf("rows[%d]", line), fmt.Sprintf("has %d columns; the header has %d", len(record), len(header)))
			continue
		}
		checkCells(f, fmt.Sprintf("rows[%d]", line), header, record)
		get := func(col string) string {
			if i, ok := index[col]; ok {
				return strings.TrimSpace(record[i])
			}
			return ""
		}
		t := V1Transaction{Payee: get("payee"), Email: get("email"), Amount: money.Input(get("amount")), Address: get("address"),
			PayID: get("payid"), PayIDType: get("payid_type"), BSB: get("bsb"), AccountNumber: get("account_number")}
		if startsFormula(t.Payee) {
			f.Add(fmt.Sprintf("rows[%d].payee", line), fmt.Sprintf("must not start with one of %s: a spreadsheet would read it as a formula",
				strings.Join(strings.Split(formulaLeads, ""), " ")))
		}
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

// formulaLeads are the first characters that make a spreadsheet read a cell
// as a formula. A batch file's payee starting with one is refused (CONTRACT
// §25): the file came from a spreadsheet and its payees go back to one.
const formulaLeads = "=+-@"

// startsFormula reports whether a spreadsheet would read s as a formula.
func startsFormula(s string) bool {
	return s != "" && strings.IndexByte(formulaLeads, s[0]) >= 0
}

// parseErrorRow names the row a CSV parse error is in by the line the row
// starts on (an unterminated quoted field is found only at the end of the
// file).
func parseErrorRow(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("rows[%d]", pe.StartLine)
	}
	return "file"
}

// checkCells adds each cell of a data row that breaks the input rule, named
// row.column. No column of a batch file is free text, so a cell holds no
// control character at all, tab and line breaks included (CONTRACT §25).
func checkCells(f fault.Fields, row string, header, record []string) {
	for i, cell := range record {
		name := row + "." + strings.ToLower(strings.TrimSpace(header[i]))
		if p := input.Problem(name, cell); p != "" {
			f.Add(name, p)
		}
	}
}

func headerIndex(header []string) (map[string]int, error) {
	index := map[string]int{}
	f := fault.Fields{}
	for i, name := range header {
		if p := input.Problem("rows[1]", name); p != "" {
			f.Add("rows[1]", "names a column that "+p)
		}
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
// (payout_transaction_details[i].member) to the file's lines (rows[N].member),
// in its members and in what they say (a mixed addressing names the row it
// differs from), and says its message again from the renamed members as
// fault.Fields.Err does, so that message and fields agree.
func (b BatchFile) ToRows(err error) error {
	e, ok := fault.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	out := *e
	out.Fields = map[string]string{}
	for k, v := range e.Fields {
		out.Fields[b.rowNames(k)] = b.rowNames(v)
	}
	said, _ := fault.As(fault.Fields(out.Fields).Err())
	out.Message = said.Message
	return &out
}

// transactionName is how the engine names a transaction of the request.
var transactionName = regexp.MustCompile(`payout_transaction_details\[(\d+)\]`)

// rowNames writes each transaction named in s as the file's row it came from.
func (b BatchFile) rowNames(s string) string {
	return transactionName.ReplaceAllStringFunc(s, func(name string) string {
		i, err := strconv.Atoi(transactionName.FindStringSubmatch(name)[1])
		if err != nil || i >= len(b.Lines) {
			return name
		}
		return fmt.Sprintf("rows[%d]", b.Lines[i])
	})
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
