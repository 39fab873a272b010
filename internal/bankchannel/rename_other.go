//go:build !linux

package bankchannel

// renameNoReplace renames without replacing: a hard link refuses an
// existing name, then the old name goes.
func renameNoReplace(from, to string) error { return linkNoReplace(from, to) }
