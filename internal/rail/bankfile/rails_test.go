package bankfile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/payfile"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestSetRules: payd rail set refuses each setting CONTRACT §17 and §25
// rule out, naming the flag, and writes nothing.
func TestSetRules(t *testing.T) {
	t.Parallel()
	base := abaSettings("au")
	tests := []struct {
		name      string
		edit      func(s *Settings)
		flag, has string
	}{
		{"a name with upper case", func(s *Settings) { s.Name = "AU" }, "--name", "lower-case letters"},
		{"a name too long", func(s *Settings) { s.Name = strings.Repeat("a", 17) }, "--name", "1 to 16"},
		{"the sandbox's name", func(s *Settings) { s.Name = "sandbox" }, "--name", "sandbox"},
		{"an unknown format", func(s *Settings) { s.Format = "csv" }, "--format", "aba, pain001 or zengin"},
		{"aba in another currency", func(s *Settings) { s.Currency, s.Methods = "NZD", []string{Settlements} }, "--currency", "must be AUD: aba files pay in AUD only"},
		{"no methods", func(s *Settings) { s.Methods = nil }, "--methods", "at least one"},
		{"an unknown method", func(s *Settings) { s.Methods = []string{"au_cheque_aud"} }, "--methods", "is not a payout method"},
		{"a method of another currency", func(s *Settings) { s.Methods = []string{"jp_bank_jpy"} }, "--methods", "pays out JPY"},
		{"PayID on an aba rail", func(s *Settings) { s.Methods = []string{"au_bank_aud", MethodPayID} }, "--methods", "cannot be served by an aba rail"},
		{"a method twice", func(s *Settings) { s.Methods = []string{Settlements, Settlements} }, "--methods", "twice"},
		{"no debtor BSB on aba", func(s *Settings) { s.DebtorBSB = "" }, "--debtor-bsb", "required on an aba rail"},
		{"a short APCA id", func(s *Settings) { s.OriginatorID = "123" }, "--originator-id", "6 digits"},
		{"no bank abbreviation", func(s *Settings) { s.BankAbbrev = "" }, "--bank-abbrev", "3-letter"},
		{"a wrong zone", func(s *Settings) { s.Timezone = "Mars/Base" }, "--timezone", "IANA"},
		{"no cut-offs", func(s *Settings) { s.Cutoffs = nil }, "--cutoffs", "at least one"},
		{"a relative outbox", func(s *Settings) { s.Outbox = "dir:out" }, "--outbox", "absolute path"},
		{"an ftp outbox", func(s *Settings) { s.Outbox = "ftp://bank/out" }, "--outbox", "dir:PATH"},
		{"an sftp outbox without a port", func(s *Settings) { s.Outbox, s.SFTPKey, s.SFTPKnownHosts = "sftp://payd@bank/out", "/k", "/h" }, "--outbox", "sftp://USER@HOST:PORT/PATH"},
		{"an sftp password", func(s *Settings) { s.Outbox, s.SFTPKey, s.SFTPKnownHosts = "sftp://payd:pw@bank:22/out", "/k", "/h" }, "--outbox", "password"},
		{"sftp without keys", func(s *Settings) { s.Outbox = "sftp://payd@bank:22/out" }, "--sftp-key", "--sftp-known-hosts are required"},
		{"the inbox as the outbox", func(s *Settings) { s.Inbox = s.Outbox }, "--inbox", "must not be the outbox"},
		{"two debtor banks", func(s *Settings) { s.DebtorBIC = "CTBAAU2S" }, "--debtor-bsb", "give one of"},
		{"zengin without its bank", func(s *Settings) {
			s.Format, s.Currency, s.Methods, s.DebtorBSB, s.OriginatorID = payfile.Zengin, "JPY", []string{"jp_bank_jpy"}, "", "1234567890"
		}, "--debtor-bank-code", "required on a zengin rail"},
		{"pain001 without a debtor bank", func(s *Settings) { s.Format, s.DebtorBSB = payfile.Pain001, "" }, "--debtor-bsb", "needs the debtor's bank"},
		{"an ABA debtor name outside the BECS set", func(s *Settings) { s.DebtorName = "Zoë Payments" }, "--debtor-name", "BECS Direct Entry characters"},
		{"an ABA debtor account too long", func(s *Settings) { s.DebtorAccount = "1234567890" }, "--debtor-account", "1 to 9 digits"},
		{"a Zengin branch not in the directory", func(s *Settings) { *s = zenginSettings("jp"); s.DebtorBranchCode = "999" }, "--debtor-branch-code", "no branch 999"},
		{"a Zengin debtor account of 8 digits", func(s *Settings) { *s = zenginSettings("jp"); s.DebtorAccount = "12345678" }, "--debtor-account", "7 digits"},
		{"a Zengin debtor name in kanji", func(s *Settings) { *s = zenginSettings("jp"); s.DebtorName = "山田商店" }, "--debtor-name", "Zengin"},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newFixture(t, db, time.Now())
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := base
				s.Methods = append([]string(nil), base.Methods...)
				tt.edit(&s)
				err := db.Exec(context.Background(), func(tx *store.Tx) error {
					_, err := fx.files.Set(context.Background(), tx, s)
					return err
				})
				e, ok := fault.As(err)
				if !ok || !strings.Contains(e.Fields[tt.flag], tt.has) {
					t.Errorf("Set = %v, want %s refused with %q", err, tt.flag, tt.has)
				}
			})
		}
		if n := countRows(t, db, `SELECT count(*) FROM rails`); n != 0 {
			t.Errorf("%d rails written by refused sets", n)
		}
	})
}

func countRows(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSetAgainstOthers: each (currency, method) has at most one rail and no
// two rails share an inbox (CONTRACT §25); set again, a rail changes its
// settings; unset, it serves nothing and another may take its methods;
// set once more, it serves again.
func TestSetAgainstOthers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 8, 0, 0, 0, sydney))
		au, npp := uniqueName("au"), uniqueName("npp")
		fx.set(abaSettings(au))
		set := func(s Settings) error {
			return db.Exec(ctx, func(tx *store.Tx) error {
				_, err := fx.files.Set(ctx, tx, s)
				return err
			})
		}
		clash := pain001Settings(npp)
		clash.Methods = []string{MethodPayID, Settlements}
		if err := set(clash); !errors.Is(err, ErrRailClash) || !strings.Contains(err.Error(), "rail "+au+" serves AUD settlements already") {
			t.Errorf("a second rail of AUD settlements: %v, want ErrRailClash", err)
		}
		shared := pain001Settings(npp)
		shared.Inbox = abaSettings(au).Inbox
		if err := set(shared); !errors.Is(err, ErrInboxShared) {
			t.Errorf("a second rail on the same inbox: %v, want ErrInboxShared", err)
		}
		fx.set(pain001Settings(npp))
		format := func(method string) payfile.Format {
			fx.files.Forget()
			f, err := fx.files.FileFormat(ctx, fx.db.Read(), "AUD", method)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		if got := [4]payfile.Format{format("au_bank_aud"), format(MethodPayID), format("settlement"), format("jp_bank_jpy")}; got != [4]payfile.Format{payfile.ABA, payfile.Pain001, payfile.ABA, ""} {
			t.Errorf("formats of au_bank_aud, PayID, settlements, a JPY method = %v", got)
		}
		again := abaSettings(au)
		again.Methods, again.Cutoffs = []string{"au_bank_aud"}, []Cutoff{{16, 0}}
		fx.set(again)
		if got := format("settlement"); got != "" {
			t.Errorf("settlements after the rail left them: %q, want none", got)
		}
		if err := db.Exec(ctx, func(tx *store.Tx) error { _, err := fx.files.Unset(ctx, tx, au); return err }); err != nil {
			t.Fatal(err)
		}
		if got := format("au_bank_aud"); got != "" {
			t.Errorf("au_bank_aud after unset: %q, want none", got)
		}
		listed, err := List(ctx, db.Read())
		if err != nil || len(listed) != 1 || listed[0].Name != npp {
			t.Errorf("rails listed after unset: %+v, %v; want only %s", listed, err, npp)
		}
		fx.clock.Set(fx.clock.Now().Add(72 * time.Hour))
		fx.set(abaSettings(au))
		if got := format("au_bank_aud"); got != payfile.ABA {
			t.Errorf("au_bank_aud set again: %q, want aba", got)
		}
		r, err := readRail(ctx, db.Read(), au)
		if want := time.Date(2026, 5, 7, 9, 30, 0, 0, sydney); err != nil || !r.NextCutoff().Equal(want) {
			t.Errorf("set again three days after unset, its next cut-off is %v (%v), want the first after now, %v", r.NextCutoff(), err, want)
		}
	})
}

// TestListShape: payd rail list shows what waits and the next cut-off in
// the rail's zone.
func TestListShape(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		m := fx.newMerchant("Shop")
		fx.hand(m, "TX000001", "au_bank_aud", 1000, bsbAccount("12345678", "Jane Doe"))
		listed, err := List(context.Background(), db.Read())
		if err != nil || len(listed) != 1 {
			t.Fatalf("List = %+v, %v", listed, err)
		}
		got := listed[0]
		if got.Waiting != 1 || !got.NextCutoffAt.T.Equal(time.Date(2026, 5, 4, 15, 0, 0, 0, sydney)) || strings.Join(got.Cutoffs, ",") != "09:30,15:00" {
			t.Errorf("listed %+v, want 1 waiting and the 15:00 cut-off next", got)
		}
	})
}
