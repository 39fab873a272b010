package webhook

// maxHinted bounds the hinted endpoints; past it they are dropped and
// the next round claims over every endpoint instead.
const maxHinted = 1024

// Wake makes an idle dispatcher look for work on every endpoint now.
func (d *Dispatcher) Wake() {
	d.mu.Lock()
	d.full = true
	d.mu.Unlock()
	d.signal()
}

// wakeFor makes an idle dispatcher look for work on endpoint now.
func (d *Dispatcher) wakeFor(endpoint string) {
	d.mu.Lock()
	d.hint(endpoint)
	d.mu.Unlock()
	d.signal()
}

// hint notes that endpoint has due events a claim finds; d.mu is held.
func (d *Dispatcher) hint(endpoint string) {
	if d.tooManyHints() {
		return
	}
	d.hinted[endpoint] = true
	d.backlog[endpoint] = true
}

// mayHave notes that endpoint may have due events, which its claim first
// probes for (endpointProbe); d.mu is held.
func (d *Dispatcher) mayHave(endpoint string) {
	if _, ok := d.hinted[endpoint]; ok || d.tooManyHints() {
		return
	}
	d.hinted[endpoint] = false
}

// tooManyHints reports whether the hinted endpoints (or those with a
// backlog) reached maxHinted, and then drops them all for a claim over
// every endpoint; d.mu is held.
func (d *Dispatcher) tooManyHints() bool {
	if len(d.hinted) < maxHinted && len(d.backlog) < maxHinted {
		return false
	}
	clear(d.hinted)
	clear(d.backlog)
	d.full = true
	return true
}

// claimedAll notes that a claim for endpoint found fewer events than it
// could take: until something hints it again, an attempt finishing there
// need not claim.
func (d *Dispatcher) claimedAll(endpoint string) {
	d.mu.Lock()
	delete(d.backlog, endpoint)
	d.mu.Unlock()
}

// signal makes an idle dispatcher run its next round now.
func (d *Dispatcher) signal() { d.poller.Wake() }
