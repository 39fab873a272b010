package zengin

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/japanese"

	"payd/internal/payfile"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.txt golden files")

// jst is Japan's zone: the cut-offs below fall on the previous day in UTC,
// so a 取組日 taken in the wrong zone shows.
var jst = time.FixedZone("JST", 9*60*60)

var debtor = payfile.Debtor{
	Name: "ペイド（カ", Account: "1234567", BankCode: "0001", BranchCode: "001",
	BankNameKana: "ﾐｽﾞﾎ", BranchNameKana: "ﾄｳｷﾖｳ", OriginatorID: "1234567890", AccountType: payfile.Current,
}

// smallFile is a cut-off with two ordinary credits.
func smallFile() payfile.File {
	return payfile.File{
		Name:      "payd-jp-main-20261202-001",
		CreatedAt: time.Date(2026, 12, 1, 15, 30, 0, 0, time.UTC), // 00:30 on 2 December in Tokyo
		Location:  jst, Currency: "JPY", Debtor: debtor,
		Credits: []payfile.Credit{
			{BankReference: "0000000001", AmountMinor: 150_000, Name: "ヤマダ　タロウ",
				BankCode: "0005", BankNameKana: "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ", BranchCode: "135", BranchNameKana: "ｼﾝｼﾞﾕｸ",
				AccountType: payfile.Ordinary, Account: "7654321"},
			{BankReference: "0000000002", AmountMinor: 98_765, Name: "ｽｽﾞｷ ﾊﾅｺ",
				BankCode: "0009", BankNameKana: "ﾐﾂｲｽﾐﾄﾓ", BranchCode: "100", BranchNameKana: "ﾎﾝﾃﾝ",
				AccountType: payfile.Ordinary, Account: "0012345"},
		},
	}
}

// edgeFile has names at and over their widths (one whose cut falls between
// a kana and its voicing mark), characters to convert (small kana, the
// prolonged sound mark, full-width and lower-case Latin), a current
// account, amounts at 1 yen and at the field's bound.
func edgeFile() payfile.File {
	d := debtor
	d.Name = "ｶﾌﾞｼｷｶﾞｲｼﾔ ﾍﾟｲﾄﾞ ｵﾍﾟﾚ-ｼﾖﾝｽﾞ ｼﾞﾔﾊﾟﾝ ﾖｺﾊﾏﾌﾞ" // ﾌ is the 40th character, its ﾞ the 41st: cut to 39
	d.AccountType = payfile.Ordinary
	return payfile.File{
		Name:      "payd-jp-edge-20270228-002",
		CreatedAt: time.Date(2027, 2, 28, 23, 59, 59, 0, jst),
		Location:  jst, Currency: "JPY", Debtor: d,
		Credits: []payfile.Credit{
			{BankReference: "0000000000", AmountMinor: 1, Name: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123", // 30
				BankCode: "0438", BankNameKana: "ﾕﾅｲﾃﾂﾄﾞ.ｵ-ﾊﾞ-ｼ-", BranchCode: "001", BranchNameKana: "ﾄｳｷﾖｳ", // 15
				AccountType: payfile.Current, Account: "0000001"},
			{BankReference: "1234567890", AmountMinor: 5_000_000,
				Name:     "ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ０１２ガ", // the ガ's mark would be the 31st
				BankCode: "9900", BankNameKana: "ﾕｳﾁﾖ", BranchCode: "019", BranchNameKana: "ｾﾞﾛｲﾁｷﾕｳ",
				AccountType: payfile.Ordinary, Account: "9999999"},
			{BankReference: "9999999999", AmountMinor: 9_999_999_999, Name: "ショーン　マッケンジー（ユ）",
				BankCode: "0033", BankNameKana: "ペイペイ", BranchCode: "001", BranchNameKana: "ハヤブサ",
				AccountType: payfile.Ordinary, Account: "1000000"},
		},
	}
}

// TestGolden pins the bytes of a small file and of one with the edge cases.
// Run go test ./internal/payfile/zengin -update to rewrite them after a
// deliberate change.
func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file payfile.File
	}{
		{"small", smallFile()},
		{"edge", edgeFile()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Write(tt.file)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			golden := filepath.Join("testdata", tt.name+".txt")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Write differs from %s:\n%s", golden, recordDiff(got, want))
			}
		})
	}
}

// TestGoldenRecords checks the golden files' shape independently of Write:
// 120 bytes and CR LF per record, Shift_JIS half-width katakana, and the
// fields §17 and §25 name, at their byte positions.
func TestGoldenRecords(t *testing.T) {
	t.Parallel()
	small := records(t, "small")
	edge := records(t, "edge")
	tests := []struct {
		name     string
		record   []byte
		from, to int
		want     string
	}{
		{"header データ区分", small[0], 1, 1, "1"},
		{"種別コード 総合振込", small[0], 2, 3, "21"},
		{"コード区分 JIS", small[0], 4, 4, "0"},
		{"依頼人コード", small[0], 5, 14, "1234567890"},
		{"依頼人名 half-width", small[0], 15, 54, "ﾍﾟｲﾄﾞ(ｶ" + strings.Repeat(" ", 33)},
		{"取組日 in Tokyo", small[0], 55, 58, "1202"},
		{"仕向銀行番号", small[0], 59, 62, "0001"},
		{"仕向銀行名", small[0], 63, 77, "ﾐｽﾞﾎ           "},
		{"仕向支店番号", small[0], 78, 80, "001"},
		{"仕向支店名", small[0], 81, 95, "ﾄｳｷﾖｳ          "},
		{"預金種目 current", small[0], 96, 96, "2"},
		{"口座番号", small[0], 97, 103, "1234567"},
		{"header ダミー", small[0], 104, 120, strings.Repeat(" ", 17)},
		{"data データ区分", small[1], 1, 1, "2"},
		{"被仕向銀行番号", small[1], 2, 5, "0005"},
		{"被仕向銀行名", small[1], 6, 20, "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ  "},
		{"被仕向支店番号", small[1], 21, 23, "135"},
		{"被仕向支店名", small[1], 24, 38, "ｼﾝｼﾞﾕｸ         "},
		{"手形交換所番号", small[1], 39, 42, "0000"},
		{"預金種目 ordinary", small[1], 43, 43, "1"},
		{"口座番号 7 digits", small[2], 44, 50, "0012345"},
		{"受取人名 from full width", small[1], 51, 80, "ﾔﾏﾀﾞ ﾀﾛｳ" + strings.Repeat(" ", 22)},
		{"振込金額", small[1], 81, 90, "0000150000"},
		{"新規コード", small[1], 91, 91, "0"},
		{"顧客コード1 the bank reference", small[1], 92, 101, "0000000001"},
		{"顧客コード2 zeros", small[1], 102, 111, "0000000000"},
		{"振込指定区分 telegraphic", small[1], 112, 112, "7"},
		{"識別表示", small[1], 113, 113, " "},
		{"data ダミー", small[1], 114, 120, strings.Repeat(" ", 7)},
		{"trailer データ区分", small[3], 1, 1, "8"},
		{"合計件数", small[3], 2, 7, "000002"},
		{"合計金額", small[3], 8, 19, "000000248765"},
		{"end record", small[4], 1, 120, "9" + strings.Repeat(" ", 119)},
		{"依頼人名 cut before a split ﾞ", edge[0], 15, 54, "ｶﾌﾞｼｷｶﾞｲｼﾔ ﾍﾟｲﾄﾞ ｵﾍﾟﾚ-ｼﾖﾝｽﾞ ｼﾞﾔﾊﾟﾝ ﾖｺﾊﾏ "},
		{"取組日 at the end of February", edge[0], 55, 58, "0228"},
		{"a name at its width", edge[1], 51, 80, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123"},
		{"a bank name at its width", edge[1], 6, 20, "ﾕﾅｲﾃﾂﾄﾞ.ｵ-ﾊﾞ-ｼ-"},
		{"full-width lower case, cut before ｶﾞ", edge[2], 51, 80, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012 "},
		{"small kana full size, ー as -", edge[3], 51, 80, "ｼﾖ-ﾝ ﾏﾂｹﾝｼﾞ-(ﾕ)" + strings.Repeat(" ", 15)},
		{"full-width bank names", edge[3], 6, 20, "ﾍﾟｲﾍﾟｲ         "},
		{"振込金額 at its bound", edge[3], 81, 90, "9999999999"},
		{"合計金額", edge[4], 8, 19, "010005000000"},
	}
	for _, tt := range tests {
		got, err := japanese.ShiftJIS.NewDecoder().Bytes(tt.record[tt.from-1 : tt.to])
		if err != nil || string(got) != tt.want {
			t.Errorf("%s (bytes %d-%d) = %q (%v), want %q", tt.name, tt.from, tt.to, got, err, tt.want)
		}
	}
	if b := small[1][50]; b != 0xD4 { // ﾔ in JIS X 0201
		t.Errorf("受取人名 starts with byte 0x%02X, want 0xD4 (ﾔ in Shift_JIS)", b)
	}
}

// records are a golden file's records, each checked to be 120 bytes and
// ended by CR LF.
func records(t *testing.T, name string) [][]byte {
	t.Helper()
	data := golden(t, name)
	if !bytes.HasSuffix(data, []byte("\r\n")) {
		t.Fatalf("%s does not end in CR LF", name)
	}
	lines := bytes.SplitAfter(data, []byte("\r\n"))
	lines = lines[:len(lines)-1]
	for i, l := range lines {
		if len(l) != 122 {
			t.Errorf("%s record %d: %d bytes with its line end, want 122", name, i+1, len(l))
		}
		lines[i] = l[:len(l)-2]
	}
	return lines
}

// TestWriteSameBytes: a cut-off re-run after a crash writes the file it
// wrote before.
func TestWriteSameBytes(t *testing.T) {
	t.Parallel()
	first, err := Write(edgeFile())
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		again, err := Write(edgeFile())
		if err != nil || !bytes.Equal(again, first) {
			t.Fatalf("a second Write differs (%v)", err)
		}
	}
}

// recordDiff shows the records that differ, decoded.
func recordDiff(got, want []byte) string {
	decode := func(b []byte) []string {
		s, _ := japanese.ShiftJIS.NewDecoder().Bytes(b)
		return strings.Split(string(s), "\r\n")
	}
	g, w := decode(got), decode(want)
	var b strings.Builder
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "record %d:\n got  %q\n want %q\n", i+1, gl, wl)
		}
	}
	return b.String()
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
