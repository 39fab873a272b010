package bank

import (
	"strings"
	"testing"

	"payd/internal/fault"
)

func dir(t *testing.T) *Directory {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestZenginGolden checks real bank/branch pairs of the pinned directory.
func TestZenginGolden(t *testing.T) {
	t.Parallel()
	d := dir(t)
	for _, want := range []Branch{
		{"0001", "みずほ", "ﾐｽﾞﾎ", "001", "東京営業部", "ﾄｳｷﾖｳ"},
		{"0005", "三菱ＵＦＪ", "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ", "001", "本店", "ﾎﾝﾃﾝ"},
		{"0009", "三井住友", "ﾐﾂｲｽﾐﾄﾓ", "001", "神保町", "ｼﾞﾝﾎﾞｳﾁﾖｳ"},
		{"0010", "りそな", "ﾘｿﾅ", "100", "証券信託業務", "ｼﾖｳｹﾝｼﾝﾀｸｷﾞﾖｳﾑ"},
		{"0033", "ＰａｙＰａｙ", "ﾍﾟｲﾍﾟｲ", "001", "本店営業部", "ﾎﾝﾃﾝ"},
		{"0134", "千葉", "ﾁﾊﾞ", "101", "五香", "ｺﾞｺｳ"},
		{"0310", "ＧＭＯあおぞらネット", "ｼﾞ-ｴﾑｵ-ｱｵｿﾞﾗﾈﾂﾄ", "001", "本店", "ﾎﾝﾃﾝ"},
		{"9900", "ゆうちょ", "ﾕｳﾁﾖ", "019", "〇一九", "ｾﾞﾛｲﾁｷﾕｳ"},
		{"0005", "三菱ＵＦＪ", "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ", "002", "丸の内", "ﾏﾙﾉｳﾁ"},
		{"0034", "セブン", "ｾﾌﾞﾝ", "101", "マーガレット", "ﾏ-ｶﾞﾚﾂﾄ"},
		{"0036", "楽天", "ﾗｸﾃﾝ", "201", "ジャズ", "ｼﾞﾔｽﾞ"},
		{"0397", "ＳＢＩ新生", "ｴｽﾋﾞ-ｱｲｼﾝｾｲ", "400", "本店", "ﾎﾝﾃﾝ"},
	} {
		got, err := d.Branch(want.BankCode, want.BranchCode)
		if err != nil {
			t.Fatalf("%s/%s: %v", want.BankCode, want.BranchCode, err)
		}
		if got != want {
			t.Errorf("%s/%s:\n got %+v\nwant %+v", want.BankCode, want.BranchCode, got, want)
		}
		if !d.HasBranch(want.BankCode, want.BranchCode) {
			t.Errorf("HasBranch(%s, %s) = false", want.BankCode, want.BranchCode)
		}
	}
}

func TestZenginRefusals(t *testing.T) {
	t.Parallel()
	d := dir(t)
	for _, c := range []struct {
		bank, branch, code, mention string
	}{
		{"001", "001", "VALIDATION_FAILED", "bank_code"},
		{"0001", "1", "VALIDATION_FAILED", "branch_code"},
		{"00O1", "001", "VALIDATION_FAILED", "bank_code"},
		{"0002", "001", "NOT_FOUND", "0002"},
		{"0001", "999", "NOT_FOUND", "999"},
	} {
		_, err := d.Branch(c.bank, c.branch)
		e, ok := fault.As(err)
		if !ok || e.Code != c.code || !strings.Contains(e.Error(), c.mention) {
			t.Errorf("Branch(%q, %q) = %v; want %s naming %s", c.bank, c.branch, err, c.code, c.mention)
		}
	}
	if d.HasBranch("0001", "999") || d.HasBranch("0002", "001") {
		t.Error("HasBranch accepts an unknown branch")
	}
}

func TestZenginBranchPages(t *testing.T) {
	t.Parallel()
	d := dir(t)
	first, total, err := d.Branches("0001", 1, 20)
	if err != nil || total < 100 || len(first) != 20 || first[0].BranchCode != "001" {
		t.Fatalf("page 1: %d of %d, %v", len(first), total, err)
	}
	seen := 0
	for page := 1; (page-1)*100 < total; page++ {
		list, _, err := d.Branches("0001", page, 100)
		if err != nil {
			t.Fatal(err)
		}
		seen += len(list)
	}
	if seen != total {
		t.Errorf("pages hold %d branches, total says %d", seen, total)
	}
	if list, _, _ := d.Branches("0001", 1_000_000, 100); len(list) != 0 {
		t.Errorf("a page past the end holds %d", len(list))
	}
}

func TestDirectorySize(t *testing.T) {
	t.Parallel()
	d := dir(t)
	if n := len(d.Banks("jp_bank_jpy")); n < 1000 {
		t.Errorf("%d Zengin banks", n)
	}
	if n := len(d.Banks("vn_bank_vnd")); n < 40 {
		t.Errorf("%d NAPAS banks", n)
	}
	for _, m := range []string{"id_bank_idr", "kr_bank_krw", "ug_bank_ugx"} {
		if len(d.Banks(m)) != 0 || d.Listed(m) {
			t.Errorf("%s: a bank list without a maintained source", m)
		}
	}
	if !strings.Contains(Source(), "zengin-code 1.0.0-p") || !strings.Contains(Source(), "vietnam-qr-pay") {
		t.Errorf("SOURCE does not name the packages: %s", Source())
	}
}

func TestNAPASGolden(t *testing.T) {
	t.Parallel()
	d := dir(t)
	for _, want := range []NAPASBank{
		{"970415", "Ngân hàng TMCP Công thương Việt Nam", "VietinBank", "ICBVVNVX"},
		{"970418", "Ngân hàng TMCP Đầu tư và Phát triển Việt Nam", "BIDV", "BIDVVNVX"},
		{"970422", "Ngân hàng TMCP Quân đội", "MB Bank", "MSCBVNVX"},
		{"970436", "Ngân hàng TMCP Ngoại Thương Việt Nam", "Vietcombank", "BFTVVNVX"},
	} {
		got, ok := d.NAPAS(want.BIN)
		if !ok || got != want {
			t.Errorf("NAPAS(%s) = %+v, %v; want %+v", want.BIN, got, ok, want)
		}
	}
	if _, ok := d.NAPAS("999999"); ok {
		t.Error("an unknown BIN resolves")
	}
}

func TestHalfWidthKana(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ガギグゲゴ":     "ｶﾞｷﾞｸﾞｹﾞｺﾞ",
		"パピプペポヴ":    "ﾊﾟﾋﾟﾌﾟﾍﾟﾎﾟｳﾞ",
		"ＡＢＣ．－（）　ア": "ABC.-() ｱ",
		"みずほ":       "みずほ",
	} {
		if got := HalfWidthKana(in); got != want {
			t.Errorf("HalfWidthKana(%q) = %q, want %q", in, got, want)
		}
	}
}
