package httpapi

import (
	"bytes"
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
	"payd/internal/money"
	"payd/internal/payout"
)

// Bounds of a v1 batch file (POST /v1/payouts/file): its bytes, and its
// rows, the transactions of one payout.
const (
	maxPayoutFileBytes = 1 << 20
	maxPayoutFileRows  = payout.MaxTransactions
)

// fileColumns are the columns a v1 batch file may have, in any order.
var fileColumns = []string{"payee", "email", "amount", "address", "payid", "payid_type", "bsb", "account_number"}

// payoutFile is a parsed v1 batch file: its transactions and the line each
// came from (the header is line 1).
type payoutFile struct {
	Transactions []payoutV1Transaction
	Lines        []int
}

// parsePayoutFile reads a v1 batch file: CSV, UTF-8 with or without a byte-order
// mark, a header row naming the columns (any order; unknown columns are
// refused), then 1 to maxPayoutFileRows transactions. Every problem is reported in
// one 422, each as rows[N].column with N the file's line number; a row that
// is not CSV ends the reading, named rows[N] by the line it starts on.
func parsePayoutFile(data []byte) (payoutFile, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !utf8.Valid(data) {
		return payoutFile{}, fault.Field("file", "must be UTF-8 text")
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return payoutFile{}, fault.Field("file", "is empty: it needs a header row and at least one transaction")
	}
	if err != nil {
		return payoutFile{}, fault.Field("file", "is not CSV: "+err.Error())
	}
	index, err := headerIndex(header)
	if err != nil {
		return payoutFile{}, err
	}
	var out payoutFile
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
		if len(out.Transactions) == maxPayoutFileRows {
			return payoutFile{}, fault.Field("file", fmt.Sprintf("has more than %d transactions", maxPayoutFileRows))
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
		t := payoutV1Transaction{Payee: get("payee"), Email: get("email"), Amount: money.Input(get("amount")), Address: get("address"),
			PayID: get("payid"), PayIDType: get("payid_type"), BSB: get("bsb"), AccountNumber: get("account_number")}
		if startsFormula(t.Payee) {
			f.Add(fmt.Sprintf("rows[%d].payee", line), fmt.Sprintf("must not start with one of %s: a spreadsheet would read it as a formula",
				strings.Join(strings.Split(formulaLeads, ""), " ")))
		}
		out.Transactions = append(out.Transactions, t)
		out.Lines = append(out.Lines, line)
	}
	if err := f.Err(); err != nil {
		return payoutFile{}, err
	}
	if len(out.Transactions) == 0 {
		return payoutFile{}, fault.Field("file", "has no transactions under its header")
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

// toRows says an error about a request made from the file, which names
// its transactions as the body of POST /v1/payouts does
// (payout_transaction_details[i].member), in the file's lines
// (rows[N].member): in its members, in what they say (a mixed addressing
// names the row it differs from) and in its message. The file is the
// endpoint's, and so are its names: the payout service sees a request.
func (b payoutFile) toRows(err error) error {
	return renameMembers(err, b.rowNames)
}

// transactionName is how a v1 body names one of its transactions.
var transactionName = regexp.MustCompile(`payout_transaction_details\[(\d+)\]`)

// rowNames writes each transaction named in s as the file's row it came from.
func (b payoutFile) rowNames(s string) string {
	return transactionName.ReplaceAllStringFunc(s, func(name string) string {
		i, err := strconv.Atoi(transactionName.FindStringSubmatch(name)[1])
		if err != nil || i >= len(b.Lines) {
			return name
		}
		return fmt.Sprintf("rows[%d]", b.Lines[i])
	})
}
