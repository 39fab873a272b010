package bai2

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"payd/internal/money"
	"payd/internal/statement"
)

// Type codes Write gives entries: 195 incoming money transfer (a credit),
// 495 outgoing money transfer (a debit).
const (
	writeCreditType = "195"
	writeDebitType  = "495"
)

// Write writes h and its booked entries as a BAI2 file of one group and one
// account, as a bank sends one (the sandbox bank's statement, CONTRACT §19):
// 01 from sender to receiver, created h.CreatedAt in loc; 02 as of h.To;
// 03 with the opening (010) and closing (015) ledger balances; a 16 per
// entry (195 credit or 495 debit, funds immediately available, its Key as
// the bank reference, its Reference as the customer reference, its
// Remittance as the text); and the 49, 98 and 99 trailers with the totals
// and counts the manual defines, which Read checks. Read reads back h and
// the entries. References may not hold a comma or a slash (they are fields),
// nor a text a line break.
func Write(w io.Writer, sender, receiver string, h statement.Header, entries []statement.Entry, loc *time.Location) error {
	c, err := money.Lookup(h.Account.Currency)
	if err != nil {
		return err
	}
	if h.Opening == nil || h.Closing == nil {
		return errors.New("BAI2: a statement states its opening and closing balances")
	}
	created := h.CreatedAt.In(loc)
	asOf := h.To.In(loc)
	var records []string
	records = append(records, fmt.Sprintf("01,%s,%s,%s,%s,1,,,2/", sender, receiver, created.Format("060102"), created.Format("1504")))
	records = append(records, fmt.Sprintf("02,%s,%s,1,%s,2400,%s,2/", receiver, sender, asOf.Format("060102"), c.Code))
	accountTotal := h.Opening.AmountMinor + h.Closing.AmountMinor
	records = append(records, fmt.Sprintf("03,%s,%s,010,%d,,,015,%d,,/", h.Account.Number, c.Code, h.Opening.AmountMinor, h.Closing.AmountMinor))
	for _, e := range entries {
		for _, field := range []string{e.Key, e.Reference} {
			if strings.ContainsAny(field, ",/\r\n") {
				return fmt.Errorf("BAI2 entry %d: reference %q holds a comma, a slash or a line break", e.Index, field)
			}
		}
		if strings.ContainsAny(e.Remittance, "\r\n") {
			return fmt.Errorf("BAI2 entry %d: its text holds a line break", e.Index)
		}
		code := writeCreditType
		if e.Direction == statement.Debit {
			code = writeDebitType
		}
		text := strings.TrimRight(e.Remittance, "/")
		if text == "" {
			text = "/"
		}
		records = append(records, fmt.Sprintf("16,%s,%d,0,%s,%s,%s", code, e.AmountMinor, e.Key, e.Reference, text))
		accountTotal += e.AmountMinor
	}
	accountRecords := len(records) - 2 + 1 // the 03, the 16s and the 49
	records = append(records, fmt.Sprintf("49,%d,%d/", accountTotal, accountRecords))
	groupRecords := accountRecords + 2 // with the 02 and the 98
	records = append(records, fmt.Sprintf("98,%d,1,%d/", accountTotal, groupRecords))
	records = append(records, fmt.Sprintf("99,%d,1,%d/", accountTotal, groupRecords+2))
	bw := bufio.NewWriter(w)
	for _, r := range records {
		if _, err := bw.WriteString(r + "\n"); err != nil {
			return err
		}
	}
	return bw.Flush()
}
