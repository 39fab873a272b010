package iso20022

import (
	"bytes"
	"testing"
	"time"
	"unicode"

	"pgregory.net/rapid"

	"payd/internal/money"
	"payd/internal/payfile"
)

// maxGeneratedCredits bounds the credits of a generated file; every amount
// is at most money.MaxMinor / maxGeneratedCredits, so the total is within
// the bound too.
const maxGeneratedCredits = 12

// xsdSample is how many generated files are validated against the XSD (in
// one xmllint run, after the property has held for all of them).
const xsdSample = 40

// TestPain001RoundTrip writes generated Files (any currency pain.001 can
// hold, any zone, texts of any characters allowed up to their schema
// lengths, accounts by BSB, BIC, Zengin code or PayID) and reads each back:
// the file holds exactly its credits, names, amounts, references and totals,
// and writing what was read gives the same bytes. A sample validates against
// the official XSD.
func TestPain001RoundTrip(t *testing.T) {
	t.Parallel()
	var sample [][]byte
	rapid.Check(t, func(rt *rapid.T) {
		f := fileGen().Draw(rt, "file")
		data, err := WritePain001(f)
		if err != nil {
			rt.Fatalf("WritePain001: %v", err)
		}
		got, err := ReadPain001(data)
		if err != nil {
			rt.Fatalf("ReadPain001: %v\n%s", err, data)
		}
		if diff := fileDiff(got, f); diff != "" {
			rt.Fatalf("ReadPain001(WritePain001(f)) is not f: %s\n%s", diff, data)
		}
		if got.Total() != f.Total() || len(got.Credits) != len(f.Credits) {
			rt.Fatalf("read %d credits totalling %d, wrote %d totalling %d", len(got.Credits), got.Total(), len(f.Credits), f.Total())
		}
		again, err := WritePain001(got)
		if err != nil {
			rt.Fatalf("WritePain001(ReadPain001(b)): %v", err)
		}
		if !bytes.Equal(again, data) {
			rt.Fatalf("WritePain001(ReadPain001(b)) is not b:\n%s\n%s", data, again)
		}
		if len(sample) < xsdSample {
			sample = append(sample, data)
		}
	})
	requireValid(t, pain001XSD, sample...)
}

// pain001Currencies are the currencies pain.001 can hold: ISO 4217 codes of
// at most five decimals.
func pain001Currencies() []string {
	var codes []string
	for _, code := range money.Codes() {
		if c := money.MustLookup(code); len(code) == 3 && c.Digits <= maxFractionDigits {
			codes = append(codes, code)
		}
	}
	return codes
}

// zoneNames are rail zones on both sides of UTC, with half- and
// quarter-hour offsets and daylight saving.
var zoneNames = []string{"UTC", "Australia/Sydney", "Asia/Tokyo", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "Pacific/Kiritimati", "America/St_Johns"}

// textRunes are the characters a generated text draws from: every class
// WritePain001 allows (letters, marks, digits, punctuation, symbols,
// spaces, format and private-use characters), as XML must escape them or
// not.
var textRunes = []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs, unicode.Cf, unicode.Co}

// textGen makes texts of 1 to max characters; a description's also hold
// tab, CR and LF.
func textGen(max int, multiline bool) *rapid.Generator[string] {
	extra := []rune("<>&'\"]")
	if multiline {
		extra = append(extra, '\t', '\r', '\n')
	}
	return rapid.StringOfN(rapid.RuneFrom(extra, textRunes...), 1, max, -1)
}

func optionalText(t *rapid.T, label string, max int, multiline bool) string {
	if rapid.Bool().Draw(t, label+"?") {
		return textGen(max, multiline).Draw(t, label)
	}
	return ""
}

func fileGen() *rapid.Generator[payfile.File] {
	return rapid.Custom(func(t *rapid.T) payfile.File {
		loc, err := time.LoadLocation(rapid.SampledFrom(zoneNames).Draw(t, "zone"))
		if err != nil {
			t.Fatal(err)
		}
		seconds := rapid.Int64Range(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()).Draw(t, "seconds")
		var nanos int64
		if rapid.IntRange(0, 3).Draw(t, "fraction?") == 0 {
			nanos = rapid.Int64Range(1, 999_999_999).Draw(t, "nanos")
		}
		n := rapid.IntRange(1, maxGeneratedCredits).Draw(t, "credits")
		refs := rapid.SliceOfNDistinct(rapid.StringMatching(`[A-Z0-9]{1,35}`), n, n, rapid.ID).Draw(t, "references")
		cur := rapid.SampledFrom(pain001Currencies()).Draw(t, "currency")
		credits := make([]payfile.Credit, n)
		for i := range credits {
			credits[i] = creditGen(refs[i]).Draw(t, "credit")
		}
		return payfile.File{
			Name:      textGen(max35Text, false).Draw(t, "name"),
			Reference: rapid.StringMatching(`[A-Z0-9]{1,35}`).Draw(t, "reference"),
			CreatedAt: time.Unix(seconds, nanos).In(loc),
			Location:  loc,
			Currency:  cur,
			Debtor:    debtorGen().Draw(t, "debtor"),
			Credits:   credits,
		}
	})
}

func debtorGen() *rapid.Generator[payfile.Debtor] {
	return rapid.Custom(func(t *rapid.T) payfile.Debtor {
		d := payfile.Debtor{
			Name:         textGen(max140Text, false).Draw(t, "name"),
			Account:      textGen(max34Text, false).Draw(t, "account"),
			OriginatorID: optionalText(t, "originator", max35Text, false),
			AccountType:  rapid.SampledFrom([]payfile.AccountType{"", payfile.Ordinary, payfile.Current}).Draw(t, "type"),
		}
		a := agentGen(true).Draw(t, "agent")
		d.BIC, d.BSB, d.BankCode, d.BranchCode = a.bic, a.bsb, a.bank, a.branch
		return d
	})
}

func creditGen(ref string) *rapid.Generator[payfile.Credit] {
	return rapid.Custom(func(t *rapid.T) payfile.Credit {
		c := payfile.Credit{
			BankReference: ref,
			AmountMinor:   rapid.Int64Range(1, money.MaxMinor/maxGeneratedCredits).Draw(t, "amount"),
			Name:          textGen(max140Text, false).Draw(t, "name"),
			AccountType:   rapid.SampledFrom([]payfile.AccountType{"", payfile.Ordinary, payfile.Current}).Draw(t, "type"),
			Remitter:      optionalText(t, "remitter", max140Text, false),
			Description:   optionalText(t, "description", max140Text, true),
		}
		payID := rapid.IntRange(0, 3).Draw(t, "payid?") == 0
		if payID {
			c.PayID = rapid.StringOfN(rapid.RuneFrom([]rune("@.+-"), textRunes...), 1, max2048Text, -1).Draw(t, "payid")
		} else {
			c.Account = textGen(max34Text, false).Draw(t, "account")
		}
		a := agentGen(!payID).Draw(t, "agent")
		c.BIC, c.BSB, c.BankCode, c.BranchCode = a.bic, a.bsb, a.bank, a.branch
		return c
	})
}

// agentGen makes an agent by BIC, BSB or Zengin code (a BIC may go with
// either); one that need not exist (a PayID's) may be none.
func agentGen(required bool) *rapid.Generator[agentIDs] {
	return rapid.Custom(func(t *rapid.T) agentIDs {
		var a agentIDs
		if rapid.Bool().Draw(t, "bic?") {
			a.bic = rapid.StringMatching(`[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?`).Draw(t, "bic")
		}
		switch rapid.IntRange(0, 2).Draw(t, "clearing") {
		case 1:
			a.bsb = rapid.StringMatching(`[0-9]{3}-[0-9]{3}`).Draw(t, "bsb")
		case 2:
			a.bank = rapid.StringMatching(`[0-9]{4}`).Draw(t, "bank")
			a.branch = rapid.StringMatching(`[0-9]{3}`).Draw(t, "branch")
		}
		if required && a == (agentIDs{}) {
			a.bsb = "062-000"
		}
		return a
	})
}
