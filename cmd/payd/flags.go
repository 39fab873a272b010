package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// flagSet is a command's flags. Settings that have an environment twin
// (CONTRACT §1) take it as their default.
type flagSet struct {
	*flag.FlagSet
	env *cliEnv
}

func newFlags(env *cliEnv, name string) *flagSet {
	fs := flag.NewFlagSet("payd "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	return &flagSet{FlagSet: fs, env: env}
}

// setting defines a flag whose default comes from an environment variable.
func (f *flagSet) setting(name, envName, def, usage string) *string {
	if v := f.env.getenv(envName); v != "" {
		def = v
	}
	return f.String(name, def, usage+" (env "+envName+")")
}

func (f *flagSet) db() *string {
	return f.setting("db", "PAYD_DB", "sqlite:payd.db", "database: sqlite:FILE or postgres://…")
}

func (f *flagSet) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitCode(0)
		}
		return exitCode(2)
	}
	if f.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", f.Arg(0))}
	}
	return nil
}

// required checks that the named string flags are not empty.
func required(flags map[string]*string) error {
	var missing []string
	for name, v := range flags {
		if strings.TrimSpace(*v) == "" {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing) // map order is random; the message should not be
		return usageError{"missing " + strings.Join(missing, ", ")}
	}
	return nil
}

// output prints v as JSON when asJSON, else text.
func output(w io.Writer, asJSON bool, v any, text func(io.Writer)) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(w)
	return nil
}
