// Package bank holds the bank directories payd ships in its binary: the
// Japanese Zengin directory (every bank and branch, for jp_bank_jpy and
// GET /v2/banks/branches) and the NAPAS member banks of Viet Nam (for
// vn_bank_vnd and the VietQR lookup). The data is real and maintained
// upstream: `go generate ./internal/bank` fetches the pinned npm releases
// named in gen/main.go and records source and date in assets/SOURCE.
//
// Indonesia (id_bank_idr), Korea (kr_bank_krw) and Uganda (ug_bank_ugx) have
// no maintained directory package payd could pin, so their lists are empty
// and those methods' bank_code is refused with a message that says why.
package bank

//go:generate go run ./gen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"payd/internal/fault"
	"payd/internal/payout"
)

//go:embed assets/zengin.tsv.gz assets/napas.tsv assets/SOURCE
var assets embed.FS

// Source is assets/SOURCE: where each directory comes from and when it was fetched.
func Source() string {
	b, _ := assets.ReadFile("assets/SOURCE")
	return string(b)
}

// Branch is one Zengin branch of a bank (CONTRACT §7, §16).
type Branch struct {
	BankCode       string `json:"bank_code" doc:"Zengin bank code (4 digits)." example:"0001"`
	BankName       string `json:"bank_name" doc:"The bank's name as the Zengin directory has it." example:"みずほ"`
	BankNameKana   string `json:"bank_name_kana" doc:"The bank's name in half-width katakana, as Zengin transfers (and simulate_deposit remitters) carry it." example:"ﾐｽﾞﾎ"`
	BranchCode     string `json:"branch_code" doc:"Zengin branch code (3 digits)." example:"001"`
	BranchName     string `json:"branch_name" doc:"The branch's name as the Zengin directory has it." example:"東京営業部"`
	BranchNameKana string `json:"branch_name_kana" doc:"The branch's name in half-width katakana." example:"ﾄｳｷﾖｳ"`
}

// NAPASBank is one member bank of the NAPAS network (Viet Nam).
type NAPASBank struct {
	BIN       string
	Name      string
	ShortName string
	SwiftCode string
}

type zenginBank struct {
	code, name, kana string
	branches         []zenginBranch // sorted by code
}

type zenginBranch struct{ code, name, kana string }

// Directory is the loaded directories. Its methods are safe for concurrent use.
type Directory struct {
	zengin    []zenginBank // sorted by code
	zenginIdx map[string]int
	napas     []NAPASBank // sorted by BIN
	napasIdx  map[string]int
	jpBanks   []payout.Bank
	vnBanks   []payout.Bank
}

var (
	loadOnce sync.Once
	loaded   *Directory
	loadErr  error
)

// Load parses the embedded directories once and returns them.
func Load() (*Directory, error) {
	loadOnce.Do(func() { loaded, loadErr = parse() })
	return loaded, loadErr
}

func parse() (*Directory, error) {
	d := &Directory{zenginIdx: map[string]int{}, napasIdx: map[string]int{}}
	gz, err := assets.ReadFile("assets/zengin.tsv.gz")
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("bank: zengin directory: %w", err)
	}
	sc := bufio.NewScanner(zr)
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case len(f) == 4 && f[0] == "B":
			if !bankCode.MatchString(f[1]) {
				return nil, fmt.Errorf("bank: zengin line %d: bank code %q", n, f[1])
			}
			d.zenginIdx[f[1]] = len(d.zengin)
			d.zengin = append(d.zengin, zenginBank{code: f[1], name: f[2], kana: f[3]})
		case len(f) == 3 && len(d.zengin) > 0:
			if !branchCode.MatchString(f[0]) {
				return nil, fmt.Errorf("bank: zengin line %d: branch code %q", n, f[0])
			}
			b := &d.zengin[len(d.zengin)-1]
			b.branches = append(b.branches, zenginBranch{code: f[0], name: f[1], kana: f[2]})
		default:
			return nil, fmt.Errorf("bank: zengin line %d is not a bank or branch", n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bank: zengin directory: %w", err)
	}
	for _, b := range d.zengin {
		d.jpBanks = append(d.jpBanks, payout.Bank{Code: b.code, Name: b.name, ShortName: HalfWidthKana(b.kana)})
	}
	vn, err := assets.ReadFile("assets/napas.tsv")
	if err != nil {
		return nil, err
	}
	for n, line := range strings.Split(strings.TrimRight(string(vn), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || !napasBIN.MatchString(f[0]) {
			return nil, fmt.Errorf("bank: napas line %d is not a member bank", n+1)
		}
		d.napasIdx[f[0]] = len(d.napas)
		d.napas = append(d.napas, NAPASBank{BIN: f[0], Name: f[1], ShortName: f[2], SwiftCode: f[3]})
		d.vnBanks = append(d.vnBanks, payout.Bank{Code: f[0], Name: f[1], ShortName: f[2]})
	}
	if len(d.zengin) == 0 || len(d.napas) == 0 {
		return nil, fmt.Errorf("bank: a directory is empty")
	}
	return d, nil
}

var (
	bankCode   = regexp.MustCompile(`^[0-9]{4}$`)
	branchCode = regexp.MustCompile(`^[0-9]{3}$`)
	napasBIN   = regexp.MustCompile(`^[0-9]{6}$`)
)

// Banks lists the banks a payout method pays into (payout.Banks): the Zengin
// banks for jp_bank_jpy (short_name is the half-width katakana name), the
// NAPAS members for vn_bank_vnd (code is the BIN), none for any other method.
func (d *Directory) Banks(method string) []payout.Bank {
	switch method {
	case "jp_bank_jpy":
		return d.jpBanks
	case "vn_bank_vnd":
		return d.vnBanks
	}
	return nil
}

// HasBranch reports whether the Zengin directory has branchCode at bankCode
// (payout.BranchChecker).
func (d *Directory) HasBranch(bankCode, branchCode string) bool {
	_, ok := d.findBranch(bankCode, branchCode)
	return ok
}

// Listed reports whether the directory lists method's banks, so that a
// bank_code outside the list is refused (payout.BankLister). IDR, KRW and UGX
// have no maintained public dataset to pin: their bank codes are checked by
// shape only.
func (d *Directory) Listed(method string) bool {
	return len(d.Banks(method)) > 0
}

func (d *Directory) findBank(code string) (*zenginBank, bool) {
	i, ok := d.zenginIdx[code]
	if !ok {
		return nil, false
	}
	return &d.zengin[i], true
}

func (d *Directory) findBranch(bank, branch string) (Branch, bool) {
	b, ok := d.findBank(bank)
	if !ok {
		return Branch{}, false
	}
	i := sort.Search(len(b.branches), func(i int) bool { return b.branches[i].code >= branch })
	if i == len(b.branches) || b.branches[i].code != branch {
		return Branch{}, false
	}
	return b.branch(i), true
}

func (b *zenginBank) branch(i int) Branch {
	br := b.branches[i]
	return Branch{BankCode: b.code, BankName: b.name, BankNameKana: HalfWidthKana(b.kana),
		BranchCode: br.code, BranchName: br.name, BranchNameKana: HalfWidthKana(br.kana)}
}

// checkCodes refuses codes of the wrong shape (422 naming each field).
func checkCodes(bank, branch string, withBranch bool) error {
	f := fault.Fields{}
	if !bankCode.MatchString(bank) {
		f.Add("bank_code", "must be a 4-digit Zengin bank code (for example 0001)")
	}
	if withBranch && !branchCode.MatchString(branch) {
		f.Add("branch_code", "must be a 3-digit Zengin branch code (for example 001)")
	}
	return f.Err()
}

// Branch finds one branch: codes of the wrong shape are a 422, an unknown
// bank or branch a 404 naming it.
func (d *Directory) Branch(bank, branch string) (Branch, error) {
	if err := checkCodes(bank, branch, true); err != nil {
		return Branch{}, err
	}
	b, ok := d.findBank(bank)
	if !ok {
		return Branch{}, fault.NotFoundf("no bank %s in the Zengin directory", bank)
	}
	br, ok := d.findBranch(bank, branch)
	if !ok {
		return Branch{}, fault.NotFoundf("no branch %s of bank %s (%s) in the Zengin directory", branch, bank, b.name)
	}
	return br, nil
}

// Branches lists one page of a bank's branches, by branch code, and their
// total.
func (d *Directory) Branches(bank string, page, perPage int) ([]Branch, int, error) {
	if err := checkCodes(bank, "", false); err != nil {
		return nil, 0, err
	}
	b, ok := d.findBank(bank)
	if !ok {
		return nil, 0, fault.NotFoundf("no bank %s in the Zengin directory", bank)
	}
	total := len(b.branches)
	out := []Branch{}
	for i := (page - 1) * perPage; i >= 0 && i < total && len(out) < perPage; i++ {
		out = append(out, b.branch(i))
	}
	return out, total, nil
}

// NAPAS finds a member bank by its BIN.
func (d *Directory) NAPAS(bin string) (NAPASBank, bool) {
	i, ok := d.napasIdx[bin]
	if !ok {
		return NAPASBank{}, false
	}
	return d.napas[i], true
}
