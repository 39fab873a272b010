package zengin_test

import (
	"testing"

	"payd/internal/bank"
	"payd/internal/payfile/zengin"
)

// TestDirectoryNamesAreZenginNames: every bank and branch kana name of the
// Zengin directory payd ships is already what a Zengin file holds, so a
// file never fails on a name the rail took from the directory.
func TestDirectoryNamesAreZenginNames(t *testing.T) {
	t.Parallel()
	d, err := bank.Load()
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, name string) {
		t.Helper()
		if got, err := zengin.HalfWidthName(name); err != nil || got != name {
			t.Errorf("%s %q: HalfWidthName = %q, %v", what, name, got, err)
		}
	}
	banks, branches := 0, 0
	for _, b := range d.Banks("jp_bank_jpy") {
		check("bank "+b.Code, b.ShortName) // the bank's kana name, half-width
		banks++
		for page := 1; ; page++ {
			list, total, err := d.Branches(b.Code, page, 100)
			if err != nil {
				t.Fatalf("Branches(%s): %v", b.Code, err)
			}
			for _, br := range list {
				check("branch "+b.Code+"-"+br.BranchCode, br.BranchNameKana)
				branches++
			}
			if page*100 >= total {
				break
			}
		}
	}
	if banks < 1000 || branches < 20_000 {
		t.Errorf("checked %d banks and %d branches: the directory is smaller than it should be", banks, branches)
	}
}
