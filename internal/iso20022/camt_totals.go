package iso20022

import (
	"errors"
	"fmt"
	"strconv"

	"payd/internal/money"
	"payd/internal/statement"
)

// The names of the camt control checks (statement.Error.Check).
const (
	CheckCamtBalance = "opening + booked credits - booked debits = closing"
	checkTxsSummry   = "TxsSummry/"
)

// The balance types (ExternalBalanceType1Code) the balance check uses.
const (
	balanceOpeningBooked    = "OPBD"
	balancePreviouslyClosed = "PRCD"
	balanceClosingBooked    = "CLBD"
	balanceInterimBooked    = "ITBD"
)

// checkReport checks a report's control totals at its end and adds what it
// says of its period and balances to the Header.
func (c *camtReader) checkReport(s *camtStatement) error {
	if c.currency.Code == "" {
		if s.all.entries == 0 && len(s.balances) == 0 {
			return c.refuse(s, "", errors.New("no currency: Acct/Ccy absent and no balance or entry"))
		}
	}
	var opening, closing *statement.Balance
	if c.format == statement.Camt053 {
		var err error
		if opening, closing, err = c.checkBalances(s); err != nil {
			return err
		}
	}
	if s.summary != nil {
		if err := c.checkSummary(s); err != nil {
			return err
		}
	}
	return c.period(s, opening, closing)
}

// checkBalances finds the statement's opening and closing booked balances
// and checks the booked entries between them (CONTRACT §18).
func (c *camtReader) checkBalances(s *camtStatement) (*statement.Balance, *statement.Balance, error) {
	byType := make(map[string]statement.Balance)
	for _, b := range s.balances {
		code := trimmed(b.Tp.CdOrPrtry.Cd)
		if code == "" {
			continue // a proprietary balance: not one the check uses
		}
		if err := c.setCurrency(b.Amt.Ccy); err != nil {
			return nil, nil, c.refuse(s, "Bal "+code, err)
		}
		bal, err := c.balanceOf(b)
		if err != nil {
			return nil, nil, c.refuse(s, "Bal "+code, err)
		}
		if _, twice := byType[code]; twice && code != balanceInterimBooked {
			return nil, nil, c.refuse(s, "Bal "+code, errors.New("stated twice"))
		}
		if _, twice := byType[code]; !twice {
			byType[code] = bal
		}
	}
	openCode, closeCode := balanceOpeningBooked, balanceClosingBooked
	if _, ok := byType[openCode]; !ok {
		openCode = balancePreviouslyClosed
	}
	_, hasOpen := byType[openCode]
	_, hasClose := byType[closeCode]
	switch {
	case !hasOpen && hasClose:
		openCode = balanceInterimBooked // a later page of a paginated statement
	case hasOpen && !hasClose:
		closeCode = balanceInterimBooked // an earlier page
	}
	opening, ok := byType[openCode]
	if !ok {
		return nil, nil, c.refuse(s, "", errors.New("no opening booked balance (Bal OPBD, PRCD or ITBD)"))
	}
	closing, ok := byType[closeCode]
	if !ok {
		return nil, nil, c.refuse(s, "", errors.New("no closing booked balance (Bal CLBD or ITBD)"))
	}
	want, err := statement.AddSigned(opening.AmountMinor, s.entries.NetMinor())
	if err != nil {
		return nil, nil, c.refuse(s, "", err)
	}
	if want != closing.AmountMinor {
		return nil, nil, statement.TotalsError(c.format, s.where(), CheckCamtBalance,
			"%s %s + credits %s - debits %s = %s, but %s is %s",
			openCode, c.amount(opening.AmountMinor), c.amount(s.entries.CreditsMinor), c.amount(s.entries.DebitsMinor),
			c.amount(want), closeCode, c.amount(closing.AmountMinor))
	}
	return &opening, &closing, nil
}

func (c *camtReader) balanceOf(b camtBalance) (statement.Balance, error) {
	minor, err := camtAmountMinor(b.Amt.Value, c.currency)
	if err != nil {
		return statement.Balance{}, fmt.Errorf("Amt: %w", err)
	}
	dir, err := direction(b.CdtDbtInd)
	if err != nil {
		return statement.Balance{}, err
	}
	if dir == statement.Debit {
		minor = -minor
	}
	date, err := camtDateOf(&b.Dt)
	if err != nil {
		return statement.Balance{}, fmt.Errorf("Dt: %w", err)
	}
	return statement.Balance{AmountMinor: minor, Date: date}, nil
}

// checkSummary checks TxsSummry against every entry the report lists.
func (c *camtReader) checkSummary(s *camtStatement) error {
	t := s.all
	checks := []struct {
		name     string
		count    *camtCount
		entries  int
		sumMinor int64
	}{
		{"TtlNtries", s.summary.TtlNtries, t.entries, t.sumMinor},
		{"TtlCdtNtries", s.summary.TtlCdtNtries, t.credits, t.creditsMinor},
		{"TtlDbtNtries", s.summary.TtlDbtNtries, t.debits, t.debitsMinor},
	}
	for _, ch := range checks {
		if ch.count == nil {
			continue
		}
		if err := c.checkCount(s, checkTxsSummry+ch.name, ch.count, ch.entries, ch.sumMinor); err != nil {
			return err
		}
	}
	if n := s.summary.TtlNtries; n != nil && n.TtlNetNtry != nil {
		return c.checkNet(s, n, t.netMinor)
	}
	return nil
}

func (c *camtReader) checkCount(s *camtStatement, name string, count *camtCount, entries int, sumMinor int64) error {
	if count.NbOfNtries != nil {
		stated, err := strconv.ParseInt(trimmed(*count.NbOfNtries), 10, 64)
		if err != nil || stated < 0 {
			return c.refuse(s, name, fmt.Errorf("NbOfNtries %q is not a count", *count.NbOfNtries))
		}
		if stated != int64(entries) {
			return statement.TotalsError(c.format, s.where(), name+"/NbOfNtries",
				"%d entries listed, TxsSummry says %d", entries, stated)
		}
	}
	if count.Sum == nil {
		return nil
	}
	stated, err := camtAmountMinor(*count.Sum, c.currency)
	if err != nil {
		return statement.TotalsError(c.format, s.where(), name+"/Sum", "Sum %q is no sum of %s amounts (%v)", *count.Sum, c.currency.Code, err)
	}
	if stated != sumMinor {
		return statement.TotalsError(c.format, s.where(), name+"/Sum",
			"the entries sum to %s, TxsSummry says %s", c.amount(sumMinor), c.amount(stated))
	}
	return nil
}

func (c *camtReader) checkNet(s *camtStatement, n *camtCount, netMinor int64) error {
	const name = checkTxsSummry + "TtlNtries/TtlNetNtry"
	stated, err := camtAmountMinor(n.TtlNetNtry.Amt, c.currency)
	if err != nil {
		return statement.TotalsError(c.format, s.where(), name, "Amt %q is no amount in %s (%v)", n.TtlNetNtry.Amt, c.currency.Code, err)
	}
	dir, err := direction(n.TtlNetNtry.CdtDbtInd)
	if err != nil {
		return c.refuse(s, name, err)
	}
	if dir == statement.Debit {
		stated = -stated
	}
	if stated != netMinor {
		return statement.TotalsError(c.format, s.where(), name,
			"the entries net to %s, TxsSummry says %s", c.amount(netMinor), c.amount(stated))
	}
	return nil
}

// period adds the report's period and balances to the Header: its FrToDt,
// else its balances' dates, else its entries' booking dates.
func (c *camtReader) period(s *camtStatement, opening, closing *statement.Balance) error {
	var from, to statement.Date
	if p := s.period; p != nil {
		var err error
		if from, err = camtDateOf(&camtDate{DtTm: p.FrDtTm}); err != nil {
			return c.refuse(s, "FrToDt/FrDtTm", err)
		}
		if to, err = camtDateOf(&camtDate{DtTm: p.ToDtTm}); err != nil {
			return c.refuse(s, "FrToDt/ToDtTm", err)
		}
	} else if opening != nil && closing != nil {
		from, to = opening.Date, closing.Date
	} else {
		from, to = s.first, s.last
	}
	if c.h.From.IsZero() || (!from.IsZero() && from.Before(c.h.From)) {
		c.h.From = from
	}
	if c.h.To.IsZero() || c.h.To.Before(to) {
		c.h.To = to
	}
	if c.h.Opening == nil {
		c.h.Opening = opening
	}
	if closing != nil {
		c.h.Closing = closing
	}
	return nil
}

// amount writes minor units of the account's currency as the files do (a
// debit balance with a minus).
func (c *camtReader) amount(minor int64) string { return money.Format(minor, c.currency) }
