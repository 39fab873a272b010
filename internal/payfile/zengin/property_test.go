package zengin

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"payd/internal/payfile"
)

// nameAlphabet is what the generated names are made of: full-width kana
// (plain, voiced, small), the prolonged sound mark, half-width kana, Latin
// letters of both widths and cases, digits and the marks names may hold.
const nameAlphabet = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン" +
	"ガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポヴァィゥェォッャュョヮヵヶー" +
	"ｱｲｳｴｵｶｷｸｹｺﾊﾋﾌﾍﾎﾝｯｬｰABCXYZabcxyz0189 ()-.　ＡＢｃ１（）．－"

func kanaText(minLen, maxLen int) *rapid.Generator[string] {
	g := rapid.StringOfN(rapid.RuneFrom([]rune(nameAlphabet)), minLen, maxLen, -1)
	if minLen == 0 {
		return g
	}
	return g.Filter(func(s string) bool { return strings.Trim(s, " 　") != "" })
}

var (
	genBankCode   = rapid.StringMatching(`[0-9]{4}`)
	genBranchCode = rapid.StringMatching(`[0-9]{3}`)
	genAccount    = rapid.StringMatching(`[0-9]{7}`)
	genType       = rapid.SampledFrom([]payfile.AccountType{payfile.Ordinary, payfile.Current})
)

func genFile(t *rapid.T) payfile.File {
	n := rapid.IntRange(1, 40).Draw(t, "credits")
	credits := make([]payfile.Credit, n)
	for i := range credits {
		credits[i] = payfile.Credit{
			BankReference:  rapid.StringMatching(`[0-9]{10}`).Draw(t, "reference"),
			AmountMinor:    rapid.Int64Range(1, maxAmountMinor).Draw(t, "amount"),
			Name:           kanaText(1, 45).Draw(t, "name"),
			BankCode:       genBankCode.Draw(t, "bank"),
			BankNameKana:   kanaText(0, 20).Draw(t, "bank name"),
			BranchCode:     genBranchCode.Draw(t, "branch"),
			BranchNameKana: kanaText(0, 20).Draw(t, "branch name"),
			AccountType:    genType.Draw(t, "account type"),
			Account:        genAccount.Draw(t, "account"),
		}
	}
	offset := rapid.IntRange(-12*4, 14*4).Draw(t, "offset quarter-hours") * 15 * 60
	return payfile.File{
		Name:      "payd-prop",
		CreatedAt: time.Unix(rapid.Int64Range(0, 4_102_444_800).Draw(t, "unix"), 0),
		Location:  time.FixedZone("rail", offset),
		Currency:  "JPY",
		Debtor: payfile.Debtor{
			Name: kanaText(1, 60).Draw(t, "debtor name"), Account: genAccount.Draw(t, "debtor account"),
			BankCode: genBankCode.Draw(t, "debtor bank"), BankNameKana: kanaText(0, 20).Draw(t, "debtor bank name"),
			BranchCode: genBranchCode.Draw(t, "debtor branch"), BranchNameKana: kanaText(0, 20).Draw(t, "debtor branch name"),
			OriginatorID: rapid.StringMatching(`[0-9]{10}`).Draw(t, "originator"), AccountType: genType.Draw(t, "debtor account type"),
		},
		Credits: credits,
	}
}

// asFiled is a name as its field holds it: half-width, cut to width,
// without the blanks that fill it.
func asFiled(t *rapid.T, s string, width int) string {
	h, err := HalfWidthName(s)
	if err != nil {
		t.Fatalf("HalfWidthName(%q): %v", s, err)
	}
	return strings.TrimRight(cut(h, width), " ")
}

// TestWriteReadProperty: every File written reads back with exactly its
// credits (references in 顧客コード1, amounts, banks, branches, accounts,
// names as filed), its debtor, its 取組日 and its count and total; and what
// Read finds writes the same file again.
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
			want[i] = c
			want[i].Name = asFiled(t, c.Name, widthName)
			want[i].BankNameKana = asFiled(t, c.BankNameKana, widthBankName)
			want[i].BranchNameKana = asFiled(t, c.BranchNameKana, widthBranchName)
		}
		if !reflect.DeepEqual(got.Credits, want) {
			t.Fatalf("credits read back\n%+v\nwant\n%+v", got.Credits, want)
		}
		if got.Total() != f.Total() {
			t.Fatalf("total %d, want %d", got.Total(), f.Total())
		}
		wantDebtor := f.Debtor
		wantDebtor.Name = asFiled(t, f.Debtor.Name, widthDebtorName)
		wantDebtor.BankNameKana = asFiled(t, f.Debtor.BankNameKana, widthBankName)
		wantDebtor.BranchNameKana = asFiled(t, f.Debtor.BranchNameKana, widthBranchName)
		if got.Debtor != wantDebtor {
			t.Fatalf("debtor %+v, want %+v", got.Debtor, wantDebtor)
		}
		if gotDay, wantDay := got.CreatedAt.In(got.Location).Format("0102"), f.CreatedAt.In(f.Location).Format("0102"); gotDay != wantDay {
			t.Fatalf("取組日 %s, want %s", gotDay, wantDay)
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
