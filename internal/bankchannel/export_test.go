package bankchannel

// SetHooks makes e call wrote after each chunk of a temporary file it writes
// and beforeRename once that file is written and synced, so that a test can
// cut or crash a Put at those steps.
func SetHooks(e Endpoint, wrote func(n int64), beforeRename func()) {
	e.(*channel).hooks = hooks{wrote: wrote, beforeRename: beforeRename}
}
