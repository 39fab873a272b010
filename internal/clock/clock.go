// Package clock is payd's source of time and its time formats. All code reads
// the current time from a Clock, so that production can use the real clock
// while the sandbox gives each merchant a test clock that it can move forward,
// and tests can hold time still.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

// Real is the machine's clock.
type Real struct{}

// Now returns time.Now(), in the local time zone and with its monotonic clock
// reading, so that durations measured between two readings stay right when
// the wall clock is stepped. Format and ToMillis convert to UTC, so the zone
// never shows in output.
func (Real) Now() time.Time {
	return time.Now()
}

// Fixed is a clock that always tells the same time.
type Fixed time.Time

// Now returns the fixed time.
func (f Fixed) Now() time.Time {
	return time.Time(f)
}

// Manual is a clock that moves only when told to, for tests. It is safe for
// concurrent use.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a Manual clock that tells t until it is set or advanced.
func NewManual(t time.Time) *Manual {
	return &Manual{now: t}
}

// Now returns the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Set moves the clock to t, forward or back.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = t
}

// Advance moves the clock forward by d (back, if d is negative) and returns
// the new time.
func (m *Manual) Advance(d time.Duration) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	return m.now
}

// offset is a clock a fixed duration ahead of another.
type offset struct {
	base  Clock
	ahead time.Duration
}

func (o offset) Now() time.Time {
	return o.base.Now().Add(o.ahead)
}

// Offset returns a clock that tells the time of base plus d. A sandbox
// merchant's test clock is the real clock plus the total the merchant has
// advanced it by, so it keeps running between advances.
func Offset(base Clock, d time.Duration) Clock {
	return offset{base: base, ahead: d}
}

// ToMillis returns t as Unix milliseconds, the form the database stores
// instants in (BIGINT). Anything finer than a millisecond is cut off, rounding
// toward the past, as Format does.
func ToMillis(t time.Time) int64 {
	return t.UnixMilli()
}

// FromMillis returns the instant ms Unix milliseconds, in UTC.
func FromMillis(ms int64) time.Time {
	return time.UnixMilli(ms).UTC()
}
