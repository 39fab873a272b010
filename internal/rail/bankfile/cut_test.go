package bankfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"payd/internal/iso20022"
	"payd/internal/payfile"
	"payd/internal/payfile/aba"
	"payd/internal/payfile/zengin"
	"payd/internal/rail"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// creditsOf reads a written ABA file back: its credits by bank reference,
// as (amount, account, name).
func creditsOf(t *testing.T, content []byte) (payfile.File, map[string]string) {
	t.Helper()
	f, err := aba.Read(content)
	if err != nil {
		t.Fatalf("the file does not read back: %v", err)
	}
	out := map[string]string{}
	for _, c := range f.Credits {
		out[c.BankReference] = fmt.Sprintf("%d %s %s %s %s", c.AmountMinor, c.BSB, c.Account, c.Name, c.Remitter)
	}
	return f, out
}

// TestCutOneFile: a cut-off puts every transfer waiting for the rail, of
// every merchant and kind, into one file named for the rail, the local date
// and the day's sequence; the file reads back to exactly those transfers;
// a transfer is in that file only, and a cut-off with nothing waiting makes
// no file.
func TestCutOneFile(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		shop, cafe := fx.newMerchant("Shop One Pty Ltd"), fx.newMerchant("Café Zoë & Sons of Sydney")
		refs := []string{
			fx.hand(shop, "PAYTX001", "au_bank_aud", 12550, bsbAccount("12345678", "Jane Doe")),
			fx.hand(shop, "stl_SETTLE01", rail.SettlementMethod, 99900, bsbAccount("87654321", "Shop One Pty Ltd")),
			fx.hand(cafe, "trf_TRANSF01", rail.TransferMethod, 500, bsbAccount("11112222", "Supplier Co")),
		}
		for _, ref := range refs {
			if !rail.ValidReference(payfile.ABA, ref) {
				t.Errorf("bank reference %q is not 16 [A-Z0-9]", ref)
			}
		}
		file := fx.cut(name)
		if want := "payd-" + name + "-20260504-001.aba"; file != want {
			t.Fatalf("file %q, want %q", file, want)
		}
		content, err := FileContent(ctx, db.Read(), file)
		if err != nil {
			t.Fatal(err)
		}
		read, credits := creditsOf(t, content)
		want := map[string]string{
			refs[0]: "12550 062-000 12345678 JANE DOE SHOP ONE PTY LTD",
			refs[1]: "99900 062-000 87654321 SHOP ONE PTY LTD SHOP ONE PTY LTD",
			refs[2]: "500 062-000 11112222 SUPPLIER CO CAF ZO & SONS OF",
		}
		for ref, w := range want {
			if credits[ref] != w {
				t.Errorf("credit %s = %q, want %q", ref, credits[ref], w)
			}
		}
		if len(credits) != len(want) || read.Reference != FileReference(strings.TrimSuffix(file, ".aba")) || read.Total() != 12550+99900+500 {
			t.Errorf("file holds %v (reference %s, total %d), want exactly the three transfers under its reference", credits, read.Reference, read.Total())
		}
		listed, err := ListFiles(ctx, db.Read())
		sum := sha256.Sum256(content)
		if err != nil || len(listed) != 1 || listed[0].SHA256 != hex.EncodeToString(sum[:]) || listed[0].Count != 3 || listed[0].Total.String() != "1129.50" ||
			listed[0].Status != Written || listed[0].Size != int64(len(content)) {
			t.Errorf("files listed %+v, %v; want the one written file", listed, err)
		}
		if got := fx.cut(name); got != "" {
			t.Errorf("a second cut-off with nothing waiting made %q", got)
		}
		if n := countRows(t, db, `SELECT count(*) FROM rail_submissions WHERE bank_file = $1 AND NOT waiting`, file); n != 3 {
			t.Errorf("%d transfers name the file, want 3", n)
		}
		later := fx.hand(cafe, "trf_TRANSF02", rail.TransferMethod, 700, bsbAccount("11112222", "Supplier Co"))
		second := fx.cut(name)
		content, _ = FileContent(ctx, db.Read(), second)
		if _, credits := creditsOf(t, content); second != "payd-"+name+"-20260504-002.aba" || len(credits) != 1 || credits[later] == "" {
			t.Errorf("the next file %s holds %v, want only %s", second, credits, later)
		}
	})
}

var errCrash = errors.New("crash")

// TestCutAgainSameBytes: a cut-off whose transaction is lost (a crash after
// the file is built) leaves nothing, and made again at the same instant it
// writes the same file: the same name, file reference and bytes.
func TestCutAgainSameBytes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		m := fx.newMerchant("Shop")
		for i := range 20 {
			fx.hand(m, fmt.Sprintf("PAYTX%03d", i), "au_bank_aud", int64(100+i), bsbAccount(fmt.Sprintf("1000%04d", i), "Payee "+fmt.Sprint(i)))
		}
		at := fx.clock.Now()
		var lost string
		var lostContent []byte
		err := db.Exec(ctx, func(tx *store.Tx) error {
			var err error
			if lost, err = fx.files.Cut(ctx, tx, name, at); err != nil {
				return err
			}
			if lostContent, err = FileContent(ctx, tx, lost); err != nil {
				return err
			}
			return errCrash
		})
		if !errors.Is(err, errCrash) {
			t.Fatal(err)
		}
		if n := countRows(t, db, `SELECT count(*) FROM bank_files`); n != 0 {
			t.Fatalf("%d files kept by a lost cut-off", n)
		}
		if n := countRows(t, db, `SELECT count(*) FROM rail_submissions WHERE waiting`); n != 20 {
			t.Fatalf("%d transfers waiting after a lost cut-off, want 20", n)
		}
		again := fx.cut(name)
		content, err := FileContent(ctx, db.Read(), again)
		if err != nil || again != lost || string(content) != string(lostContent) {
			t.Errorf("made again: %s (%d bytes, same bytes %v), want %s again", again, len(content), string(content) == string(lostContent), lost)
		}
	})
}

// TestScheduledCutoffs: the rounds make each cut-off when the real clock
// passes it, in the rail's zone: a file holds what was handed over before
// its cut-off (a transfer handed after the instant waits for the next one,
// however soon the round comes), a cut-off with nothing waiting makes no
// file, and each file is delivered to the outbox.
func TestScheduledCutoffs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 8, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		m := fx.newMerchant("Shop")
		at := func(hhmm string, day int) {
			t.Helper()
			v, err := time.ParseInLocation("2006-01-02 15:04:05", fmt.Sprintf("2026-05-%02d %s", day, hhmm), sydney)
			if err != nil {
				t.Fatal(err)
			}
			fx.clock.Set(v)
			if err := fx.files.Round(ctx); err != nil {
				t.Fatal(err)
			}
		}
		first := fx.hand(m, "PAYTX001", "au_bank_aud", 1000, bsbAccount("12345678", "Jane Doe"))
		at("09:29:59", 4)
		if n := countRows(t, db, `SELECT count(*) FROM bank_files`); n != 0 {
			t.Errorf("%d files before the 09:30 cut-off", n)
		}
		fx.clock.Set(time.Date(2026, 5, 4, 9, 30, 0, 500_000_000, sydney))
		late := fx.hand(m, "PAYTX002", "au_bank_aud", 2000, bsbAccount("12345678", "Jane Doe"))
		at("09:30:01", 4)
		at("15:00:00", 4)
		at("09:30:00", 5)
		files, err := ListFiles(ctx, db.Read())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			content, ok := fx.outbox.get(f.Name)
			_, credits := creditsOf(t, content)
			refs := slices.Sorted(func(yield func(string) bool) {
				for r := range credits {
					if !yield(r) {
						return
					}
				}
			})
			got = append(got, fmt.Sprintf("%s %s delivered %v (outbox %v) %v", f.Name, f.CutoffAt.T.In(sydney).Format("15:04"), f.Status == Delivered, ok, refs))
		}
		want := []string{
			fmt.Sprintf("payd-%s-20260504-002.aba 15:00 delivered true (outbox true) [%s]", name, late),
			fmt.Sprintf("payd-%s-20260504-001.aba 09:30 delivered true (outbox true) [%s]", name, first),
		}
		if !slices.Equal(got, want) {
			t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestDeliveryRetries: a delivery that fails is retried after a delay that
// doubles, the file written until it is delivered, then delivered with the
// time, once.
func TestDeliveryRetries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		fx.hand(fx.newMerchant("Shop"), "PAYTX001", "au_bank_aud", 1000, bsbAccount("12345678", "Jane Doe"))
		file := fx.cut(name)
		fx.outbox.failures = 2
		state := func() string {
			var status string
			var attempts int
			var lastError string
			err := db.Read().QueryRow(`SELECT status, attempts, last_error FROM bank_files WHERE name = $1`, file).Scan(&status, &attempts, &lastError)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("%s after %d (%v)", status, attempts, lastError != "")
		}
		var got []string
		for _, step := range []time.Duration{0, 30 * time.Second, 30 * time.Second, time.Minute, time.Minute} {
			fx.clock.Set(fx.clock.Now().Add(step))
			if err := fx.files.Round(ctx); err != nil && !strings.Contains(err.Error(), "connection refused") {
				t.Fatal(err)
			}
			got = append(got, state())
		}
		want := []string{"written after 1 (true)", "written after 1 (true)", "written after 2 (true)", "written after 2 (true)", "delivered after 3 (false)"}
		if !slices.Equal(got, want) || fx.outbox.puts != 3 {
			t.Errorf("delivery went %v with %d puts, want %v with 3", got, fx.outbox.puts, want)
		}
		var deliveredAt int64
		if err := db.Read().QueryRow(`SELECT delivered_at FROM bank_files WHERE name = $1`, file).Scan(&deliveredAt); err != nil || deliveredAt != fx.clock.Now().UnixMilli() {
			t.Errorf("delivered_at %d (%v), want the clock's %d", deliveredAt, err, fx.clock.Now().UnixMilli())
		}
	})
}

// TestCutRefusesWhatTheFormatCannotHold: a transfer whose name an ABA file
// cannot hold (one that reached the rail without the payout's check) fails
// with the format's reason and is in no file; the others go into the file.
func TestCutRefusesWhatTheFormatCannotHold(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		m := fx.newMerchant("Shop")
		good := fx.hand(m, "PAYTX001", "au_bank_aud", 1000, bsbAccount("12345678", "Jane Doe"))
		fx.hand(m, "stl_BAD00001", rail.SettlementMethod, 2000, bsbAccount("12345678", "Zoë Ltd"))
		file := fx.cut(name)
		content, err := FileContent(ctx, db.Read(), file)
		if err != nil {
			t.Fatal(err)
		}
		if _, credits := creditsOf(t, content); len(credits) != 1 || credits[good] == "" {
			t.Errorf("file holds %v, want only %s", credits, good)
		}
		heard := fx.heard.all()
		if len(heard) != 1 || heard[0].Key != "stl_BAD00001" || heard[0].Verdict != rail.Failed || !strings.Contains(heard[0].Reason, "the aba file cannot hold this transfer: Name must use only the BECS") {
			t.Errorf("outcomes %+v, want stl_BAD00001 failed with the format's reason", heard)
		}
		if n := countRows(t, db, `SELECT count(*) FROM rail_submissions WHERE key = 'stl_BAD00001' AND merchant_id = $1 AND bank_file IS NULL AND NOT waiting`, m); n != 1 {
			t.Errorf("the refused transfer is in a file or waits")
		}
	})
}

// TestCutEachFormat: a zengin rail's file (ten-digit references, names
// made half-width katakana, the directory's kana bank names) and a pain001
// rail's (a PayID) each read back, by the format's reader, to exactly the
// transfers handed to the rail.
func TestCutEachFormat(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		jp, npp := uniqueName("jp"), uniqueName("npp")
		fx.set(zenginSettings(jp))
		fx.set(pain001Settings(npp))
		m := fx.newMerchant("Shop")
		jpAccount := map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "7654321", "account_name": "ヤマダ タロウ", "account_type": "ordinary"}
		refs := []string{
			fx.handIn("JPY", m, "PAYTX001", "jp_bank_jpy", 12000, jpAccount),
			fx.handIn("JPY", m, "stl_SETTLE01", rail.SettlementMethod, 50000, jpAccount),
		}
		payID := fx.hand(m, "PAYTX002", "au_payid_npp_aud", 700, map[string]any{"pay_id": "jane@example.com", "pay_id_type": "EMAIL"})
		for _, ref := range refs {
			if !rail.ValidReference(payfile.Zengin, ref) {
				t.Errorf("a Zengin bank reference %q is not 10 digits", ref)
			}
		}
		readers := map[payfile.Format]func([]byte) (payfile.File, error){payfile.Zengin: zengin.Read, payfile.Pain001: iso20022.ReadPain001}
		for _, c := range []struct {
			rail   string
			format payfile.Format
			want   []string
		}{
			{jp, payfile.Zengin, []string{refs[0] + " 12000 0001-001 ﾐｽﾞﾎ 7654321 ﾔﾏﾀﾞ ﾀﾛｳ", refs[1] + " 50000 0001-001 ﾐｽﾞﾎ 7654321 ﾔﾏﾀﾞ ﾀﾛｳ"}},
			{npp, payfile.Pain001, []string{payID + " 700 - jane@example.com Jane Doe"}},
		} {
			file := fx.cut(c.rail)
			if !strings.HasSuffix(file, "."+c.format.Extension()) {
				t.Errorf("%s file named %q", c.format, file)
			}
			content, err := FileContent(ctx, db.Read(), file)
			if err != nil {
				t.Fatal(err)
			}
			read, err := readers[c.format](content)
			if err != nil {
				t.Fatalf("the %s file does not read back: %v", c.format, err)
			}
			var got []string
			for _, cr := range read.Credits {
				where := cr.BankCode + "-" + cr.BranchCode + " " + cr.BankNameKana + " " + cr.Account
				if cr.PayID != "" {
					where = "- " + cr.PayID
				}
				got = append(got, fmt.Sprintf("%s %d %s %s", cr.BankReference, cr.AmountMinor, where, cr.Name))
			}
			slices.Sort(got)
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s file holds\n%s\nwant\n%s", c.format, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		}
	})
}
