// Command payd-openapi writes the OpenAPI document payd's API serves at
// /api/openapi.json, built from the route table without a server or a
// database. The official clients are generated from it (client/go,
// client/ts: their go:generate and npm run generate call it).
//
//	payd-openapi [-env sandbox|production] [-o file]
package main

import (
	"flag"
	"fmt"
	"os"

	"payd/internal/httpapi"
)

func main() {
	env := flag.String("env", string(httpapi.Sandbox), "the environment whose document to write: sandbox (with the sandbox routes) or production")
	out := flag.String("o", "", "the file to write (standard output when empty)")
	flag.Parse()
	if err := run(httpapi.Environment(*env), *out); err != nil {
		fmt.Fprintln(os.Stderr, "payd-openapi:", err)
		os.Exit(1)
	}
}

// run writes env's document to the file out, or to standard output.
func run(env httpapi.Environment, out string) error {
	if env != httpapi.Sandbox && env != httpapi.Production {
		return fmt.Errorf("unknown environment %q: sandbox or production", env)
	}
	doc := append(httpapi.Document(env), '\n')
	if out == "" {
		_, err := os.Stdout.Write(doc)
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}
