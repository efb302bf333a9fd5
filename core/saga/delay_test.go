package saga

import (
	"testing"
	"time"
)

// TestCeilMillis: a deadline's delay is rounded up to whole milliseconds,
// so it never falls due before its time (rounded toward zero, At(t) with a
// sub-millisecond part fell due up to a millisecond early on SQLite).
func TestCeilMillis(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0},
		{time.Millisecond, 1},
		{700*time.Millisecond + 500*time.Microsecond, 701},
		{time.Nanosecond, 1},
		{-500 * time.Microsecond, 0},
		{-1500 * time.Microsecond, -1},
	} {
		if got := ceilMillis(tc.d); got != tc.want {
			t.Errorf("ceilMillis(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}
