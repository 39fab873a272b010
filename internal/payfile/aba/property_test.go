package aba

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"payd/internal/payfile"
)

// becsAlphabet is what the generated names are made of: the BECS set and
// lower case, which Write upper-cases.
const becsAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 " + becsPunctuation

func becsText(maxLen int) *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom([]rune(becsAlphabet)), 1, maxLen, -1).
		Filter(func(s string) bool { return strings.TrimSpace(s) != "" })
}

var (
	genBSB       = rapid.StringMatching(`[0-9]{3}-[0-9]{3}`)
	genAccount   = rapid.StringMatching(`[0-9]{0,8}[1-9]`) // 1 to 9 digits, not all zeros
	genReference = rapid.StringMatching(`[A-Z0-9]{16}`)
)

func genFile(t *rapid.T) payfile.File {
	n := rapid.IntRange(1, 40).Draw(t, "credits")
	credits := make([]payfile.Credit, n)
	for i := range credits {
		credits[i] = payfile.Credit{
			BankReference: genReference.Draw(t, "reference"),
			// each at most the total's bound over n, so every file fits
			AmountMinor: rapid.Int64Range(1, maxAmountMinor/int64(n)).Draw(t, "amount"),
			Name:        becsText(48).Draw(t, "name"),
			Account:     genAccount.Draw(t, "account"),
			BSB:         genBSB.Draw(t, "bsb"),
			Remitter:    becsText(24).Draw(t, "remitter"),
		}
	}
	offset := rapid.IntRange(-12*4, 14*4).Draw(t, "offset quarter-hours") * 15 * 60
	return payfile.File{
		Name:      "payd-prop",
		Reference: genReference.Draw(t, "file reference"),
		CreatedAt: time.Unix(rapid.Int64Range(946_728_000, 4_102_394_399).Draw(t, "unix"), 0), // 2000-01-01 to 2099-12-31 in every zone
		Location:  time.FixedZone("rail", offset),
		Currency:  "AUD",
		Debtor: payfile.Debtor{
			Name: becsText(48).Draw(t, "debtor name"), Account: genAccount.Draw(t, "debtor account"),
			BSB: genBSB.Draw(t, "debtor bsb"), OriginatorID: rapid.StringMatching(`[0-9]{6}`).Draw(t, "apca id"),
			BankAbbrev: rapid.StringMatching(`[A-Z]{3}`).Draw(t, "bank"),
		},
		Credits: credits,
	}
}

// asFiled is a name as its field holds it: upper case, cut to width, without
// the blanks that fill it.
func asFiled(s string, width int) string {
	s = strings.ToUpper(s) // the generated names are ASCII
	if len(s) > width {
		s = s[:width]
	}
	return strings.TrimRight(s, " ")
}

// TestWriteReadProperty: every File written reads back with exactly its
// credits (references, amounts, accounts, names as filed), its debtor, its
// file reference, its processing date and its total; and what Read finds
// writes the same file again.
func TestWriteReadProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		f := genFile(t)
		data, err := Write(f)
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		if len(data) != (len(f.Credits)+3)*122 {
			t.Fatalf("%d bytes for %d credits", len(data), len(f.Credits))
		}
		got, err := Read(data)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		want := make([]payfile.Credit, len(f.Credits))
		for i, c := range f.Credits {
			want[i] = payfile.Credit{
				BankReference: c.BankReference, AmountMinor: c.AmountMinor, Name: asFiled(c.Name, 32),
				Account: c.Account, BSB: c.BSB, Remitter: asFiled(c.Remitter, 16),
			}
		}
		if !reflect.DeepEqual(got.Credits, want) {
			t.Fatalf("credits read back\n%+v\nwant\n%+v", got.Credits, want)
		}
		if got.Total() != f.Total() || got.Reference != f.Reference {
			t.Fatalf("total %d, reference %q; want %d, %q", got.Total(), got.Reference, f.Total(), f.Reference)
		}
		wantDebtor := f.Debtor
		wantDebtor.Name = asFiled(f.Debtor.Name, 26)
		if got.Debtor != wantDebtor {
			t.Fatalf("debtor %+v, want %+v", got.Debtor, wantDebtor)
		}
		if gotDay, wantDay := got.CreatedAt.In(got.Location).Format(time.DateOnly), f.CreatedAt.In(f.Location).Format(time.DateOnly); gotDay != wantDay {
			t.Fatalf("processing date %s, want %s", gotDay, wantDay)
		}
		again, err := Write(got)
		if err != nil {
			t.Fatalf("Write of what Read found: %v", err)
		}
		if back, err := Read(again); err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("what Read found does not read back the same (%v)", err)
		}
	})
}
