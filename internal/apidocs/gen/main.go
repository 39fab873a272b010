// Command gen fetches the pinned Swagger UI release from the npm registry and
// writes the files payd embeds to serve /api/docs, with a record of their
// source. Run it with `go generate ./internal/apidocs` (npm must be on PATH).
package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// version is the pinned swagger-ui-dist release.
const version = "5.35.0"

// files are the package's files payd serves, and the name each is kept under.
var files = map[string]string{
	"package/swagger-ui-bundle.js": "swagger-ui-bundle.js",
	"package/swagger-ui.css":       "swagger-ui.css",
	"package/LICENSE":              "LICENSE",
	"package/NOTICE":               "NOTICE",
}

func main() {
	if err := run("assets"); err != nil {
		fmt.Fprintln(os.Stderr, "apidocs gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "swagger-ui-dist")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("npm", "pack", "--silent", "swagger-ui-dist@"+version)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	name, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack: %w", err)
	}
	tarball := filepath.Join(dir, strings.TrimSpace(string(name)))
	if err := extract(tarball, out); err != nil {
		return err
	}
	source := fmt.Sprintf("swagger-ui-dist %s from the npm registry (https://www.npmjs.com/package/swagger-ui-dist), fetched %s by internal/apidocs/gen.\n",
		version, time.Now().UTC().Format("2006-01-02"))
	return os.WriteFile(filepath.Join(out, "SOURCE"), []byte(source), 0o644)
}

func extract(tarball, out string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	found := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		keep, ok := files[h.Name]
		if !ok {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, keep), data, 0o644); err != nil {
			return err
		}
		found++
	}
	if found != len(files) {
		return fmt.Errorf("found %d of the %d files in %s", found, len(files), tarball)
	}
	return nil
}
