package consumer

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRetryPolicyDefaultsAndRefusals(t *testing.T) {
	p, err := RetryPolicy{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := RetryPolicy{MaxAttempts: 5, Initial: time.Second, Max: 5 * time.Minute, Multiplier: 2, Jitter: 0.2}
	if p != want {
		t.Errorf("defaults %+v, want %+v", p, want)
	}
	for _, bad := range []RetryPolicy{{MaxAttempts: -1}, {Initial: -time.Second}, {Multiplier: 0.5}, {Jitter: 1.5}, {Jitter: -0.1}} {
		if _, err := bad.withDefaults(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: got %v, want ErrInvalidOptions", bad, err)
		}
	}
	if _, err := checkPolicy("RETRY_FOREVER"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("unknown policy: got %v", err)
	}
	if p, _ := checkPolicy(""); p != PolicyHalt {
		t.Errorf("default policy %q, want HALT", p)
	}
}

func TestBackoff(t *testing.T) {
	exact, _ := RetryPolicy{Initial: time.Second, Max: 10 * time.Second, NoJitter: true}.withDefaults()
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 9: 10 * time.Second} {
		if got := exact.Backoff(n); got != want {
			t.Errorf("backoff(%d) = %v, want %v", n, got, want)
		}
	}
	jittered, _ := RetryPolicy{Initial: 10 * time.Second, Jitter: 0.2}.withDefaults()
	for range 200 {
		if d := jittered.Backoff(1); d < 8*time.Second || d > 12*time.Second {
			t.Fatalf("backoff with ±20 %% jitter of 10 s = %v", d)
		}
	}
}

func TestFailureReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // prefix
		n    int    // characters
	}{
		{"short", errors.New("boom"), "*errors.errorString: boom", 25},
		{"wrapped: innermost type, whole message", fmt.Errorf("apply: %w", errors.New("boom")), "*errors.errorString: apply: boom", 32},
		{"multi-byte cut by characters", errors.New(strings.Repeat("é", 2000)), "*errors.errorString: é", MaxFailureReason},
		{"invalid UTF-8 replaced", errors.New("a\xffb"), "*errors.errorString: a\uFFFDb", 24},
	} {
		got := failureReason(tc.err)
		if !strings.HasPrefix(got, tc.want) || utf8.RuneCountInString(got) != tc.n || !utf8.ValidString(got) {
			t.Errorf("%s: %q (%d characters), want prefix %q and %d characters", tc.name, got, utf8.RuneCountInString(got), tc.want, tc.n)
		}
	}
}

func TestKeyHash(t *testing.T) {
	// FNV-1a 64 of "" is its offset basis; of "a" the published vector.
	if got := uint64(KeyHash("")); got != 0xcbf29ce484222325 {
		t.Errorf("KeyHash(\"\") = %#x", got)
	}
	if got := uint64(KeyHash("a")); got != 0xaf63dc4c8601ec8c {
		t.Errorf("KeyHash(\"a\") = %#x", got)
	}
}

// TestIsPowerOf10: the endless apply retry logs at the 10th, 100th,
// 1000th… try only.
func TestIsPowerOf10(t *testing.T) {
	for n, want := range map[int]bool{1: true, 10: true, 100: true, 1000: true, 0: false, 2: false, 11: false, 20: false, 110: false, 1001: false} {
		if got := isPowerOf10(n); got != want {
			t.Errorf("isPowerOf10(%d) = %v, want %v", n, got, want)
		}
	}
}
