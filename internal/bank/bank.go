// Package bank holds the bank directories payd ships: today Japan's Zengin
// bank and branch codes (data/zengin.tsv.gz, generated from the maintained
// zengin-code dataset by `go generate`; data/SOURCE says which release and
// when). Payout methods check their bank_code against it, and GET
// /v2/banks/branches answers from it. Directories for other countries are
// added the same way when a maintained public dataset exists.
package bank

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	"payd/internal/payout"
)

//go:generate go run ./gen

//go:embed data/zengin.tsv.gz
var zenginData []byte

// Bank is a Zengin bank: its 4-digit code, name and half-width katakana name.
type Bank struct {
	Code, Name, Kana string
}

// Branch is one of a bank's branches: its 3-digit code and names.
type Branch struct {
	BankCode, Code, Name, Kana string
}

// Zengin is the Japanese directory.
type Zengin struct {
	banks    map[string]Bank
	order    []string
	branches map[string][]Branch // by bank code, in code order
}

var (
	zenginOnce sync.Once
	zengin     *Zengin
	zenginErr  error
)

// LoadZengin reads the embedded directory once.
func LoadZengin() (*Zengin, error) {
	zenginOnce.Do(func() { zengin, zenginErr = parseZengin(zenginData) })
	return zengin, zenginErr
}

func parseZengin(data []byte) (*Zengin, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("zengin directory: %w", err)
	}
	z := &Zengin{banks: map[string]Bank{}, branches: map[string][]Branch{}}
	sc := bufio.NewScanner(gz)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case len(f) == 4 && f[0] == "B":
			z.banks[f[1]] = Bank{Code: f[1], Name: f[2], Kana: f[3]}
			z.order = append(z.order, f[1])
		case len(f) == 5 && f[0] == "R":
			z.branches[f[1]] = append(z.branches[f[1]], Branch{BankCode: f[1], Code: f[2], Name: f[3], Kana: f[4]})
		default:
			return nil, fmt.Errorf("zengin directory: bad line %q", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("zengin directory: %w", err)
	}
	sort.Strings(z.order)
	return z, nil
}

// Bank finds a bank by its code.
func (z *Zengin) Bank(code string) (Bank, bool) {
	b, ok := z.banks[code]
	return b, ok
}

// Branch finds a branch of a bank.
func (z *Zengin) Branch(bankCode, code string) (Branch, bool) {
	list := z.branches[bankCode]
	i := sort.Search(len(list), func(i int) bool { return list[i].Code >= code })
	if i < len(list) && list[i].Code == code {
		return list[i], true
	}
	return Branch{}, false
}

// Branches lists a bank's branches in code order.
func (z *Zengin) Branches(bankCode string) []Branch { return z.branches[bankCode] }

// Directory is every directory payd has, as the payout engine asks for
// them (payout.Banks).
type Directory struct {
	zengin *Zengin
	banks  []payout.Bank
}

// NewDirectory loads the embedded directories.
func NewDirectory() (*Directory, error) {
	z, err := LoadZengin()
	if err != nil {
		return nil, err
	}
	d := &Directory{zengin: z}
	for _, code := range z.order {
		b := z.banks[code]
		d.banks = append(d.banks, payout.Bank{Code: b.Code, Name: b.Name, ShortName: b.Kana})
	}
	return d, nil
}

// Zengin is the Japanese directory.
func (d *Directory) Zengin() *Zengin { return d.zengin }

// Banks lists the banks a payout method pays into; a method whose country
// has no directory here has none (its bank_code is then refused).
func (d *Directory) Banks(method string) []payout.Bank {
	if method == "jp_bank_jpy" {
		return d.banks
	}
	return nil
}

// HasBranch reports whether a method's bank has the branch.
func (d *Directory) HasBranch(method, bankCode, branchCode string) bool {
	if method != "jp_bank_jpy" {
		return true
	}
	_, ok := d.zengin.Branch(bankCode, branchCode)
	return ok
}
