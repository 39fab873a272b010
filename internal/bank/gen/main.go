// Command gen fetches the pinned zengin-code release (Japan's Zengin bank
// and branch codes, maintained at https://github.com/zengin-code) from the
// npm registry and writes the directory payd embeds, with a record of its
// source. Run it with `go generate ./internal/bank` (npm must be on PATH).
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/width"
)

// version is the pinned zengin-code release.
const version = "1.0.0-p20260824"

type entry struct {
	Code     string           `json:"code"`
	Name     string           `json:"name"`
	Kana     string           `json:"kana"`
	Branches map[string]entry `json:"branches"`
}

func main() {
	if err := run("data"); err != nil {
		fmt.Fprintln(os.Stderr, "bank gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "zengin-code")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("npm", "pack", "--silent", "zengin-code@"+version)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	name, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack: %w", err)
	}
	raw, err := read(filepath.Join(dir, strings.TrimSpace(string(name))), "package/lib/zengin-data.js")
	if err != nil {
		return err
	}
	// The data is a CommonJS module whose value is JSON.
	js := strings.TrimSpace(string(raw))
	js = strings.TrimSuffix(strings.TrimPrefix(js, "module.exports ="), ";")
	var banks map[string]entry
	if err := json.Unmarshal([]byte(js), &banks); err != nil {
		return fmt.Errorf("read zengin-data.js: %w", err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	w := bufio.NewWriter(gz)
	branches := 0
	for _, code := range slices.Sorted(mapsKeys(banks)) {
		b := banks[code]
		fmt.Fprintf(w, "B\t%s\t%s\t%s\n", b.Code, clean(b.Name), halfWidth(b.Kana))
		for _, bc := range slices.Sorted(mapsKeys(b.Branches)) {
			r := b.Branches[bc]
			fmt.Fprintf(w, "R\t%s\t%s\t%s\t%s\n", b.Code, r.Code, clean(r.Name), halfWidth(r.Kana))
			branches++
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "zengin.tsv.gz"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	source := fmt.Sprintf("zengin.tsv.gz: zengin-code %s from the npm registry (https://www.npmjs.com/package/zengin-code, MIT, data by https://github.com/zengin-code/source-data), %d banks and %d branches, kana made half-width; fetched %s by internal/bank/gen.\n",
		version, len(banks), branches, time.Now().UTC().Format("2006-01-02"))
	return os.WriteFile(filepath.Join(out, "SOURCE"), []byte(source), 0o644)
}

func mapsKeys(m map[string]entry) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// clean keeps a name on one TSV field.
func clean(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

// halfWidth writes katakana in half-width forms (ｶﾞ for ガ), as Zengin
// transfer files and simulate_deposit's remitter names carry them.
func halfWidth(s string) string { return clean(width.Narrow.String(norm.NFD.String(s))) }

func read(tarball, want string) ([]byte, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s is not in the package", want)
		}
		if err != nil {
			return nil, err
		}
		if h.Name == want {
			return io.ReadAll(tr)
		}
	}
}
