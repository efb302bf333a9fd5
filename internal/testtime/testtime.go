// Package testtime is the one time scale of every test wait: hang guards,
// dial and start timeouts, "gave up after" bounds. A bound written for a
// quiet machine is multiplied by Scale, so a loaded machine waits longer
// instead of failing; no test asserts that something was fast.
//
// Scale is TIDEMARK_TEST_TIME_SCALE (default 1), raised to the 1-minute
// load average divided by the number of cores when that is larger, so a
// machine running other work scales itself without anyone setting it.
package testtime

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// EnvVar names the environment variable holding the base scale.
const EnvVar = "TIDEMARK_TEST_TIME_SCALE"

// Scale returns the factor every test bound is multiplied by: at least 1,
// at least TIDEMARK_TEST_TIME_SCALE, at least load1/cores. It is read on
// each call (cheap), so a bound taken later sees the load of then.
func Scale() float64 {
	s := 1.0
	if v, err := strconv.ParseFloat(strings.TrimSpace(os.Getenv(EnvVar)), 64); err == nil && v > s {
		s = v
	}
	if l := load1(); l > 0 {
		s = max(s, l/float64(runtime.NumCPU()))
	}
	return s
}

// load1 is the 1-minute load average, 0 where /proc/loadavg is absent.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// D returns d multiplied by Scale.
func D(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Scale())
}

// Context is context.WithTimeout with the bound scaled.
func Context(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, D(d))
}

// After is time.After with the bound scaled.
func After(d time.Duration) <-chan time.Time { return time.After(D(d)) }

// Deadline is now plus the scaled bound.
func Deadline(d time.Duration) time.Time { return time.Now().Add(D(d)) }

// Describe says how a bound was scaled, for "gave up after" messages.
func Describe(d time.Duration) string {
	s := Scale()
	if s == 1 {
		return d.String()
	}
	return fmt.Sprintf("%s (%s × time scale %.1f)", D(d).Round(time.Millisecond), d, s)
}

// Poll calls cond every interval until it returns true, an error, or the
// scaled bound runs out. On running out the error says what was awaited,
// for how long, and where everything stood (state, called then; nil for
// nothing).
func Poll(ctx context.Context, what string, bound, interval time.Duration, cond func() (bool, error), state func() string) error {
	deadline := Deadline(bound)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			msg := fmt.Sprintf("gave up waiting for %s after %s", what, Describe(bound))
			if ctx.Err() != nil {
				msg += " (" + ctx.Err().Error() + ")"
			}
			if state != nil {
				msg += "; where things stood: " + state()
			}
			return fmt.Errorf("%s", msg)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}
