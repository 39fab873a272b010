// Command gen fetches the pinned bank directories from the npm registry and
// writes the compact files payd embeds, with a record of their source:
//
//   - zengin-code: every Japanese bank and branch (Zengin codes), as
//     assets/zengin.tsv.gz;
//   - vietnam-qr-pay: the NAPAS member banks of Viet Nam (BIN, name, short
//     name, SWIFT code), as assets/napas.tsv.
//
// Run it with `go generate ./internal/bank` (npm and node must be on PATH).
// The packages' data is JavaScript; node evaluates it and prints JSON, so no
// value is parsed out of source text by hand.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The pinned releases. Raise them to take a newer directory.
const (
	zenginVersion = "1.0.0-p20260824"
	napasVersion  = "1.5.1"
)

func main() {
	if err := run("assets"); err != nil {
		fmt.Fprintln(os.Stderr, "bank gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "bank-gen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, pkg := range []string{"zengin-code@" + zenginVersion, "vietnam-qr-pay@" + napasVersion} {
		if err := unpack(dir, pkg); err != nil {
			return err
		}
	}
	if err := zengin(filepath.Join(dir, "zengin-code", "package"), out); err != nil {
		return err
	}
	if err := napas(filepath.Join(dir, "vietnam-qr-pay", "package"), out); err != nil {
		return err
	}
	day := time.Now().UTC().Format("2006-01-02")
	source := fmt.Sprintf(`zengin.tsv.gz: zengin-code %s from the npm registry (https://www.npmjs.com/package/zengin-code, data of https://github.com/zengin-code/source-data, MIT), fetched %s by internal/bank/gen.
napas.tsv: vietnam-qr-pay %s from the npm registry (https://www.npmjs.com/package/vietnam-qr-pay, MIT), its Banks list, fetched %s by internal/bank/gen.
`, zenginVersion, day, napasVersion, day)
	return os.WriteFile(filepath.Join(out, "SOURCE"), []byte(source), 0o644)
}

// unpack fetches pkg with npm pack and unpacks it in dir/<name>/package.
func unpack(dir, pkg string) error {
	cmd := exec.Command("npm", "pack", "--silent", pkg)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	name, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack %s: %w", pkg, err)
	}
	target := filepath.Join(dir, pkg[:strings.LastIndex(pkg, "@")])
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	tar := exec.Command("tar", "xzf", filepath.Join(dir, strings.TrimSpace(string(name))), "-C", target)
	tar.Stderr = os.Stderr
	return tar.Run()
}

// nodeJSON evaluates expr with node in dir and decodes the JSON it prints.
func nodeJSON(dir, expr string, v any) error {
	cmd := exec.Command("node", "-e", "process.stdout.write(JSON.stringify("+expr+"))")
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node %s: %w", expr, err)
	}
	return json.Unmarshal(b, v)
}

type zenginEntry struct {
	Code     string                 `json:"code"`
	Name     string                 `json:"name"`
	Kana     string                 `json:"kana"`
	Branches map[string]zenginEntry `json:"branches"`
}

// clean keeps a field off the file's separators.
func clean(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(strings.TrimSpace(s))
}

// zengin writes one line per bank, "B code name kana", followed by one line
// per branch of it, "code name kana" (tab-separated, sorted by code).
func zengin(pkg, out string) error {
	var banks map[string]zenginEntry
	if err := nodeJSON(pkg, "require('./lib/zengin-data.js')", &banks); err != nil {
		return err
	}
	if len(banks) < 1000 {
		return fmt.Errorf("zengin-code has %d banks: not the full directory", len(banks))
	}
	var buf bytes.Buffer
	for _, code := range sortedKeys(banks) {
		b := banks[code]
		fmt.Fprintf(&buf, "B\t%s\t%s\t%s\n", clean(b.Code), clean(b.Name), clean(b.Kana))
		for _, bc := range sortedKeys(b.Branches) {
			br := b.Branches[bc]
			fmt.Fprintf(&buf, "%s\t%s\t%s\n", clean(br.Code), clean(br.Name), clean(br.Kana))
		}
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(buf.Bytes())
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "zengin.tsv.gz"), gz.Bytes(), 0o644)
}

type napasEntry struct {
	Bin       string `json:"bin"`
	Name      string `json:"name"`
	ShortName string `json:"shortName"`
	SwiftCode string `json:"swiftCode"`
}

// napas writes one line per member bank: "bin name short_name swift_code".
func napas(pkg, out string) error {
	var banks []napasEntry
	if err := nodeJSON(pkg, "require('./dist/constants/banks.js').Banks", &banks); err != nil {
		return err
	}
	if len(banks) < 30 {
		return fmt.Errorf("vietnam-qr-pay has %d banks: not the NAPAS directory", len(banks))
	}
	sort.Slice(banks, func(i, j int) bool { return banks[i].Bin < banks[j].Bin })
	var buf bytes.Buffer
	seen := map[string]bool{}
	for _, b := range banks {
		if b.Bin == "" || seen[b.Bin] {
			continue
		}
		seen[b.Bin] = true
		fmt.Fprintf(&buf, "%s\t%s\t%s\t%s\n", clean(b.Bin), clean(b.Name), clean(b.ShortName), clean(b.SwiftCode))
	}
	return os.WriteFile(filepath.Join(out, "napas.tsv"), buf.Bytes(), 0o644)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
