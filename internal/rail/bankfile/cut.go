package bankfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"payd/internal/payfile"
	"payd/internal/rail"
	"payd/internal/store"
)

// lockCut is the namespace of a rail's cut-off lock: one process at a time
// makes a rail's cut-offs.
const lockCut = "bankfile.cut"

// Cut makes rail's cut-off at the instant at, now (payd bankfile cut), in
// tx, which the caller's audit entry shares: every transfer waiting for the
// rail goes into one file. It waits for a cut-off another process is
// making of the rail, and returns the file's name, or "" when nothing was
// waiting (then no file is made). The rail's scheduled cut-offs go on
// after at.
func (f *Files) Cut(ctx context.Context, tx *store.Tx, railName string, at time.Time) (string, error) {
	if err := tx.LockKey(ctx, lockCut, railName); err != nil {
		return "", err
	}
	r, err := readRail(ctx, tx, railName)
	if err != nil {
		return "", err
	}
	if !at.After(r.CutThrough) {
		at = r.CutThrough.Add(time.Millisecond)
	}
	return f.cut(ctx, tx, r, at)
}

// cutDue makes the rail's cut-offs that are due by now, one transaction
// each, unless another process is making them; it returns the files made.
func (f *Files) cutDue(ctx context.Context, name string, now time.Time) ([]string, error) {
	var made []string
	for range maxCatchUp {
		res, err := store.Do(ctx, f.DB, func(tx *store.Tx) (cutResult, error) {
			if err := tx.TryLockKey(ctx, lockCut, name); err != nil {
				return cutResult{}, err
			}
			r, err := readRail(ctx, tx, name)
			if err != nil {
				return cutResult{}, err
			}
			next := r.NextCutoff()
			if next.After(now) {
				return cutResult{}, nil
			}
			file, err := f.cut(ctx, tx, r, next)
			return cutResult{file: file, due: true}, err
		})
		switch {
		case store.IsKeyLocked(err):
			return made, nil // another process is making it
		case err != nil:
			return made, err
		case !res.due:
			return made, nil
		}
		if res.file != "" {
			made = append(made, res.file)
		}
	}
	return made, nil
}

// maxCatchUp bounds the cut-offs one round makes for a rail (a process
// down for days catches up over rounds).
const maxCatchUp = 32

type cutResult struct {
	file string
	due  bool
}

// waiting is a transfer taken from the waiting set by a cut-off.
type waiting struct {
	merchantID, key, method                     string
	amount                                      int64
	params                                      map[string]any
	bankReference, payee, description, remitter string
}

// cut makes r's cut-off at the instant at, in tx, which holds r's lock: the
// transfers waiting that were handed over before at leave the waiting set
// for the file, which is written and stored; r's cut-offs are then made
// through at. It returns the file's name, or "" when none waited.
func (f *Files) cut(ctx context.Context, tx *store.Tx, r Rail, at time.Time) (string, error) {
	day := at.In(r.loc).Format("20060102")
	var last int
	// global lookup: bank_files are operator records, no merchant's.
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(seq), 0) FROM bank_files WHERE rail = $1 AND day = $2`, r.Name, day).Scan(&last); err != nil {
		return "", fmt.Errorf("cut-off of rail %s: %w", r.Name, err)
	}
	base := fmt.Sprintf("payd-%s-%s-%03d", r.Name, day, last+1)
	name := base + "." + r.Format.Extension()
	var rows []waiting
	// spans merchants: a cut-off takes every merchant's transfers waiting
	// for the rail, each into exactly this file (the update is what takes
	// it, so a transfer is in one file ever).
	err := tx.Query(ctx, `UPDATE rail_submissions SET waiting = $1, bank_file = $2 WHERE rail = $3 AND waiting AND handed_at < $4
		RETURNING merchant_id, key, method, amount, params, bank_reference, payee, description, remitter`,
		[]any{false, name, r.Name, at.UnixMilli()}, func(row store.Row) error {
			var w waiting
			var params string
			if err := row.Scan(&w.merchantID, &w.key, &w.method, &w.amount, &params, &w.bankReference, &w.payee, &w.description, &w.remitter); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(params), &w.params); err != nil {
				return fmt.Errorf("transfer %s: params: %w", w.key, err)
			}
			rows = append(rows, w)
			return nil
		})
	if err != nil {
		return "", fmt.Errorf("cut-off of rail %s: %w", r.Name, err)
	}
	// global lookup: rails are operator records, no merchant's.
	if err := tx.Send(ctx, `UPDATE rails SET cut_through = $1 WHERE name = $2`, at.UnixMilli(), r.Name); err != nil {
		return "", fmt.Errorf("cut-off of rail %s: %w", r.Name, err)
	}
	if len(rows) == 0 {
		return "", nil
	}
	// The same rows in the same order make the same bytes.
	slices.SortFunc(rows, func(a, b waiting) int { return strings.Compare(a.bankReference, b.bankReference) })
	file, content, err := f.build(ctx, tx, r, at, base, rows)
	if err != nil || file.Credits == nil {
		return "", err
	}
	sum := sha256.Sum256(content)
	f.kill(StepBuilt, "file", name, "sha256", hex.EncodeToString(sum[:]))
	now := f.Clock.Now().UnixMilli()
	// global lookup: bank_files are operator records, no merchant's.
	if err := tx.Send(ctx, `INSERT INTO bank_files (name, rail, day, seq, file_reference, sha256, size, count, total, currency, content,
		status, cutoff_at, created_at, attempts, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 0, $14)`,
		name, r.Name, day, last+1, file.Reference, hex.EncodeToString(sum[:]), len(content), len(file.Credits), file.Total(), r.Currency,
		content, string(Written), at.UnixMilli(), now); err != nil {
		return "", fmt.Errorf("store bank file %s: %w", name, err)
	}
	tx.AfterCommit(func() { f.kill(StepWritten, "file", name) })
	return name, nil
}

// build writes the file of rows. A transfer the format cannot hold (a
// field it refuses, payfile.FieldError) fails with the reason and leaves
// the file, which is written without it: a cut-off never stops for one
// transfer that slipped past the rules at its creation (a rail set after
// it). When none is left, file.Credits is nil and nothing is written.
func (f *Files) build(ctx context.Context, tx *store.Tx, r Rail, at time.Time, base string, rows []waiting) (payfile.File, []byte, error) {
	write, ok := f.Writers[r.Format]
	if !ok {
		return payfile.File{}, nil, fmt.Errorf("cut-off of rail %s: payd has no writer of %s files", r.Name, r.Format)
	}
	debtor, err := f.debtor(r)
	if err != nil {
		return payfile.File{}, nil, err
	}
	file := payfile.File{Name: base, Reference: FileReference(base), CreatedAt: at, Location: r.loc, Currency: r.Currency, Debtor: debtor}
	for _, w := range rows {
		c, err := f.credit(r, w)
		if err != nil {
			return payfile.File{}, nil, err
		}
		file.Credits = append(file.Credits, c)
	}
	for len(file.Credits) > 0 {
		content, err := write(file)
		var fe *payfile.FieldError
		if !errors.As(err, &fe) || fe.Credit < 0 || fe.Credit >= len(file.Credits) {
			if err != nil {
				return payfile.File{}, nil, fmt.Errorf("cut-off of rail %s: %w", r.Name, err)
			}
			return file, content, nil
		}
		if err := f.refuse(ctx, tx, rows[fe.Credit], fe); err != nil {
			return payfile.File{}, nil, err
		}
		rows = slices.Delete(rows, fe.Credit, fe.Credit+1)
		file.Credits = slices.Delete(file.Credits, fe.Credit, fe.Credit+1)
	}
	file.Credits = nil
	return file, nil, nil
}

// refuse fails a transfer its rail's format cannot hold: it is in no file,
// and its listener fails it with the format's reason (funds back, as any
// failure).
func (f *Files) refuse(ctx context.Context, tx *store.Tx, w waiting, fe *payfile.FieldError) error {
	if err := tx.Send(ctx, `UPDATE rail_submissions SET bank_file = NULL WHERE merchant_id = $1 AND key = $2`, w.merchantID, w.key); err != nil {
		return err
	}
	h := f.handler(w.key)
	if h == nil {
		return fmt.Errorf("transfer %s: nobody listens to its outcome", w.key)
	}
	reason := fmt.Sprintf("the %s file cannot hold this transfer: %s %s", fe.Format, fe.Field, fe.Problem)
	f.Log.Warn("bank file refused a transfer", "key", w.key, "merchant_id", w.merchantID, "bank_reference", w.bankReference, "reason", reason)
	_, err := h(ctx, tx, rail.Outcome{Key: w.key, MerchantID: w.merchantID, Verdict: rail.Failed, Reason: reason})
	return err
}

// FileReference is the file reference of the file named base (CONTRACT
// §25: 16 [A-Z0-9]): drawn from its name, so that a cut-off made again
// after a crash names its file the same; file names are unique, and the
// key bank_files_reference keeps the references so.
func FileReference(base string) string {
	const base36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	sum := sha256.Sum256([]byte("payd bank file " + base))
	out := make([]byte, rail.ReferenceLen)
	for i := range out {
		out[i] = base36[int(sum[i])%len(base36)]
	}
	return string(out)
}

// debtor is r's account as its files name it.
func (f *Files) debtor(r Rail) (payfile.Debtor, error) {
	d := payfile.Debtor{Name: r.DebtorName, Account: r.DebtorAccount, BSB: dashedBSB(r.DebtorBSB), BIC: r.DebtorBIC,
		BankCode: r.DebtorBankCode, BranchCode: r.DebtorBranchCode, OriginatorID: r.OriginatorID, BankAbbrev: r.BankAbbrev,
		AccountType: r.DebtorAccountType}
	if d.BankCode == "" || f.Banks == nil {
		return d, nil
	}
	b, err := f.Banks.Branch(d.BankCode, d.BranchCode)
	if err != nil {
		return payfile.Debtor{}, fmt.Errorf("rail %s: the debtor's bank: %w", r.Name, err)
	}
	d.BankNameKana, d.BranchNameKana = b.BankNameKana, b.BranchNameKana
	return d, nil
}

// credit is a waiting transfer as its file holds it: the recipient's
// details from its params (a name the format cannot hold is refused by
// the writer, and the transfer fails: build).
func (f *Files) credit(r Rail, w waiting) (payfile.Credit, error) {
	param := func(k string) string {
		s, _ := w.params[k].(string)
		return s
	}
	name := param("account_name")
	if name == "" {
		name = w.payee
	}
	c := payfile.Credit{BankReference: w.bankReference, AmountMinor: w.amount, Name: name, Account: param("account_number"),
		BSB: dashedBSB(param("bsb")), BIC: param("swift_code"), PayID: param("pay_id"), Remitter: fitRemitter(r.Format, w.remitter),
		Description: w.description}
	if code, branch := param("bank_code"), param("branch_code"); code != "" && branch != "" {
		c.BankCode, c.BranchCode = code, branch
		c.AccountType = payfile.AccountType(param("account_type"))
		if c.AccountType == "" {
			c.AccountType = payfile.Ordinary
		}
		if f.Banks != nil {
			b, err := f.Banks.Branch(code, branch)
			if err != nil {
				return payfile.Credit{}, fmt.Errorf("transfer %s: %w", w.key, err)
			}
			c.BankNameKana, c.BranchNameKana = b.BankNameKana, b.BranchNameKana
		}
	}
	return c, nil
}

// dashedBSB writes a BSB as nnn-nnn.
func dashedBSB(bsb string) string {
	digits := strings.ReplaceAll(bsb, "-", "")
	if len(digits) != 6 {
		return bsb
	}
	return digits[:3] + "-" + digits[3:]
}
