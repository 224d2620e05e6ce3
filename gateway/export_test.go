package gateway

import "time"

// HoldBackoff makes every backoff of u's restarts last an hour until
// release is called, which also ends the one under way: a test then
// counts starts without racing the clock.
func HoldBackoff(u *Upstream) (release func()) {
	u.mu.Lock()
	u.backoff = time.Hour
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		u.backoff = 0
		u.retryAt = time.Time{}
		u.mu.Unlock()
	}
}

// RepeatsText is repeatsText, for tests of its cases.
var RepeatsText = repeatsText
