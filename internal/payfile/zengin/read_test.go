package zengin

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"payd/internal/payfile"
)

// TestReadGolden: each golden file reads back as the File it was written
// from, as the file holds it (half-width, cut to the fields).
func TestReadGolden(t *testing.T) {
	t.Parallel()
	d := payfile.Debtor{
		Name: "ﾍﾟｲﾄﾞ(ｶ", Account: "1234567", BankCode: "0001", BranchCode: "001",
		BankNameKana: "ﾐｽﾞﾎ", BranchNameKana: "ﾄｳｷﾖｳ", OriginatorID: "1234567890", AccountType: payfile.Current,
	}
	edgeDebtor := d
	edgeDebtor.Name, edgeDebtor.AccountType = "ｶﾌﾞｼｷｶﾞｲｼﾔ ﾍﾟｲﾄﾞ ｵﾍﾟﾚ-ｼﾖﾝｽﾞ ｼﾞﾔﾊﾟﾝ ﾖｺﾊﾏ", payfile.Ordinary
	tests := []struct {
		name string
		want payfile.File
	}{
		{"small", payfile.File{
			CreatedAt: time.Date(0, 12, 2, 0, 0, 0, 0, time.UTC), Location: time.UTC, Currency: "JPY", Debtor: d,
			Credits: []payfile.Credit{
				{BankReference: "0000000001", AmountMinor: 150_000, Name: "ﾔﾏﾀﾞ ﾀﾛｳ", BankCode: "0005", BankNameKana: "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ",
					BranchCode: "135", BranchNameKana: "ｼﾝｼﾞﾕｸ", AccountType: payfile.Ordinary, Account: "7654321"},
				{BankReference: "0000000002", AmountMinor: 98_765, Name: "ｽｽﾞｷ ﾊﾅｺ", BankCode: "0009", BankNameKana: "ﾐﾂｲｽﾐﾄﾓ",
					BranchCode: "100", BranchNameKana: "ﾎﾝﾃﾝ", AccountType: payfile.Ordinary, Account: "0012345"},
			},
		}},
		{"edge", payfile.File{
			CreatedAt: time.Date(0, 2, 28, 0, 0, 0, 0, time.UTC), Location: time.UTC, Currency: "JPY", Debtor: edgeDebtor,
			Credits: []payfile.Credit{
				{BankReference: "0000000000", AmountMinor: 1, Name: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123", BankCode: "0438", BankNameKana: "ﾕﾅｲﾃﾂﾄﾞ.ｵ-ﾊﾞ-ｼ-",
					BranchCode: "001", BranchNameKana: "ﾄｳｷﾖｳ", AccountType: payfile.Current, Account: "0000001"},
				{BankReference: "1234567890", AmountMinor: 5_000_000, Name: "ABCDEFGHIJKLMNOPQRSTUVWXYZ012", BankCode: "9900", BankNameKana: "ﾕｳﾁﾖ",
					BranchCode: "019", BranchNameKana: "ｾﾞﾛｲﾁｷﾕｳ", AccountType: payfile.Ordinary, Account: "9999999"},
				{BankReference: "9999999999", AmountMinor: 9_999_999_999, Name: "ｼﾖ-ﾝ ﾏﾂｹﾝｼﾞ-(ﾕ)", BankCode: "0033", BankNameKana: "ﾍﾟｲﾍﾟｲ",
					BranchCode: "001", BranchNameKana: "ﾊﾔﾌﾞｻ", AccountType: payfile.Ordinary, Account: "1000000"},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Read(golden(t, tt.name))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestReadRefuses: a file that is not what Write makes is refused, saying
// where.
func TestReadRefuses(t *testing.T) {
	t.Parallel()
	small := string(golden(t, "small"))
	records := strings.SplitAfter(small, "\r\n")[:5]
	// set replaces bytes from.. (1-based) of record n (1-based) with s, in
	// Shift_JIS already (ASCII here).
	set := func(n, from int, s string) string {
		r := append([]string(nil), records...)
		line := r[n-1]
		r[n-1] = line[:from-1] + s + line[from-1+len(s):]
		return strings.Join(r, "")
	}
	without := func(n int) string {
		r := append([]string(nil), records[:n-1]...)
		return strings.Join(append(r, records[n:]...), "")
	}
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "0 records"},
		{"LF line ends", strings.ReplaceAll(small, "\r\n", "\n"), "record 1: ends in LF without CR"},
		{"no final line end", strings.TrimSuffix(small, "\r\n"), "record 5: no line end"},
		{"a short record", set(2, 113, "\r\n"), "record 2: 112 bytes, not 120"},
		{"an EOF byte after the end record", small + "\x1a", "record 6: no line end"},
		{"a double-byte character", set(2, 51, "\x83\x4e"), "record 2, byte 51: 0x83 is not a single-byte JIS X 0201 character"},
		{"UTF-8 instead of Shift_JIS", set(2, 51, "ﾔ"), "record 2, byte 51: 0xef is not a single-byte"},
		{"a wrong 種別コード", set(1, 2, "11"), `record 1, bytes 2-3: "11", not "21"`},
		{"EBCDIC", set(1, 4, "1"), `record 1, bytes 4-4: "1", not "0"`},
		{"a bad 取組日", set(1, 55, "1332"), `取組日 "1332" is not an MMDD date`},
		{"a record type out of place", set(2, 1, "8"), "record 2, bytes 1-1: データ区分 '8' where a '2' record belongs"},
		{"a 預金種目 of 4", set(2, 43, "4"), "預金種目 \"4\" is neither 1 (ordinary) nor 2 (current)"},
		{"an amount with a blank", set(2, 81, " "), `bytes 81-90: " 000150000" is not digits`},
		{"a zero amount", set(3, 81, "0000000000"), "record 3, bytes 81-90: 振込金額 is zero"},
		{"a customer code 2", set(2, 102, "0000000001"), `bytes 102-111: "0000000001", not "0000000000"`},
		{"EDI information", set(2, 113, "Y"), `bytes 113-113: "Y", not " "`},
		{"a name with a small kana", set(2, 51, "\xaf"), `bytes 51-80: "ｯﾏﾀﾞ ﾀﾛｳ" is not a Zengin name`},
		{"a blank name", set(2, 51, strings.Repeat(" ", 30)), "record 2, bytes 51-80: a name is blank"},
		{"a wrong count", set(4, 2, "000003"), "record 4: 合計件数 3, but the file has 2 data records"},
		{"a wrong total", set(4, 8, "000000248766"), "record 4: 合計金額 248766, but the data records sum to 248765"},
		{"a missing data record", without(3), "record 3: 合計件数 2, but the file has 1 data records"},
		{"no end record", without(5), "record 4, bytes 1-1: データ区分 '8' where a '9' record belongs"},
		{"an end record not blank", set(5, 120, "X"), `record 5, bytes 2-120`},
		{"a header alone", records[0], "1 records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := Read([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read = %+v, %v; want an error containing %q", f, err, tt.want)
			}
		})
	}
}
