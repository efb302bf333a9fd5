package consumer

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// ErrInvalidOptions: runner options refused before any SQL.
var ErrInvalidOptions = errors.New("invalid consumer options")

// InvalidOptionsError says which option was refused.
type InvalidOptionsError struct {
	Field  string
	Reason string
}

func (e *InvalidOptionsError) Error() string {
	return fmt.Sprintf("consumer options: %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidOptions) hold.
func (e *InvalidOptionsError) Unwrap() error { return ErrInvalidOptions }

// RetryPolicy is a failing message's budget and backoff: attempt n (n ≥ 1
// failures so far) is retried Initial × Multiplier^(n-1) later, capped at
// Max, spread by ±Jitter so instances that failed together do not retry in
// lockstep. Zero fields take the defaults below.
type RetryPolicy struct {
	// MaxAttempts is how often a message is tried before its budget is
	// spent (default 5: enough to ride out a deploy or a short outage of
	// what the handler calls, few enough that a poison message dead-letters
	// within minutes). 1 sends a failure straight to the error policy.
	MaxAttempts int
	// Initial is the first backoff (default 1 s).
	Initial time.Duration
	// Max caps the backoff (default 5 min: a retry never waits long after
	// its cause is fixed).
	Max time.Duration
	// Multiplier grows the backoff per failure (default 2).
	Multiplier float64
	// Jitter is the relative spread, 0..1 (default 0.2, ±20 %). Set
	// NoJitter for exact backoffs.
	Jitter float64
	// NoJitter turns the jitter off (a zero Jitter means the default).
	NoJitter bool
}

// Retry policy defaults (see RetryPolicy for the reasons).
const (
	DefaultMaxAttempts = 5
	DefaultInitial     = time.Second
	DefaultMaxBackoff  = 5 * time.Minute
	DefaultMultiplier  = 2.0
	DefaultJitter      = 0.2
)

// withDefaults fills zero fields and refuses impossible ones.
func (p RetryPolicy) withDefaults() (RetryPolicy, error) {
	switch {
	case p.MaxAttempts < 0:
		return p, &InvalidOptionsError{"Retry.MaxAttempts", "negative"}
	case p.Initial < 0 || p.Max < 0:
		return p, &InvalidOptionsError{"Retry.Initial/Max", "negative"}
	case p.Multiplier != 0 && p.Multiplier < 1:
		return p, &InvalidOptionsError{"Retry.Multiplier", "below 1 (backoffs would shrink)"}
	case p.Jitter < 0 || p.Jitter > 1 || math.IsNaN(p.Jitter):
		return p, &InvalidOptionsError{"Retry.Jitter", "outside 0..1"}
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Initial == 0 {
		p.Initial = DefaultInitial
	}
	if p.Max == 0 {
		p.Max = DefaultMaxBackoff
	}
	if p.Max < p.Initial {
		p.Max = p.Initial
	}
	if p.Multiplier == 0 {
		p.Multiplier = DefaultMultiplier
	}
	if p.NoJitter {
		p.Jitter = 0
	} else if p.Jitter == 0 {
		p.Jitter = DefaultJitter
	}
	return p, nil
}

// Backoff is the wait after the n-th failure (n ≥ 1), jitter included.
func (p RetryPolicy) Backoff(n int) time.Duration {
	d := float64(p.Initial) * math.Pow(p.Multiplier, float64(max(n, 1)-1))
	d = min(d, float64(p.Max))
	if p.Jitter > 0 {
		d *= 1 + p.Jitter*(2*rand.Float64()-1)
	}
	return time.Duration(d)
}

func checkPolicy(p ErrorPolicy) (ErrorPolicy, error) {
	switch p {
	case "":
		return PolicyHalt, nil
	case PolicyHalt, PolicyDeadLetterKey, PolicyDeadLetter:
		return p, nil
	}
	return p, &InvalidOptionsError{"OnError", fmt.Sprintf("unknown policy %q", p)}
}

// NopMetrics discards every figure (Options.Metrics nil).
type NopMetrics struct{}

// Lag discards.
func (NopMetrics) Lag(Consumer, string, int, int64) {}

// Applied discards.
func (NopMetrics) Applied(Consumer, string, time.Duration) {}

// Retried discards.
func (NopMetrics) Retried(Consumer, string, bool) {}

// DeadLettered discards.
func (NopMetrics) DeadLettered(Consumer, string, DeliveryStatus) {}

// Halted discards.
func (NopMetrics) Halted(Consumer, HaltReason) {}
