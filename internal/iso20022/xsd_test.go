package iso20022

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The official schemas (../shared/iso20022/ beside the repository).
const (
	pain001XSD = "pain.001.001.10.xsd"
	pain002XSD = "pain.002.001.11.xsd"
)

// schemaPath finds an official XSD by walking up from the package directory
// to the directory that holds shared/iso20022 (the repository sits beside
// shared/).
func schemaPath(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		path := filepath.Join(dir, "shared", "iso20022", name)
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no shared/iso20022/%s above the package directory", name)
		}
		dir = parent
	}
}

// xmllint is the path of libxml2's xmllint, which validates against an XSD.
// Without it the validation is skipped, except on CI (CI=true), which
// installs it (.ci/run: Debian libxml2-utils).
func xmllint(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("xmllint")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI validates the ISO 20022 files against their XSD, but xmllint is not installed (Debian libxml2-utils)")
	}
	t.Skip("xmllint is not installed (Debian libxml2-utils): XSD validation skipped")
	return ""
}

// schemaErrors runs xmllint --noout --schema xsd over files and returns its
// complaints, or "" when every file is valid.
func schemaErrors(t testing.TB, xsd string, files ...string) string {
	t.Helper()
	args := append([]string{"--noout", "--schema", schemaPath(t, xsd)}, files...)
	out, err := exec.Command(xmllint(t), args...).CombinedOutput()
	if err == nil {
		return ""
	}
	if len(out) == 0 {
		return err.Error()
	}
	return string(out)
}

// writeTemp writes documents into files of a temporary directory.
func writeTemp(t testing.TB, docs ...[]byte) []string {
	t.Helper()
	dir := t.TempDir()
	files := make([]string, len(docs))
	for i, doc := range docs {
		files[i] = filepath.Join(dir, strconv.Itoa(i)+".xml")
		if err := os.WriteFile(files[i], doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// requireValid checks docs against xsd in a subtest of its own, so that a
// machine without xmllint skips only the validation.
func requireValid(t *testing.T, xsd string, docs ...[]byte) {
	t.Helper()
	t.Run("xsd", func(t *testing.T) {
		if complaints := schemaErrors(t, xsd, writeTemp(t, docs...)...); complaints != "" {
			t.Fatalf("not valid against %s:\n%s", xsd, complaints)
		}
	})
}
