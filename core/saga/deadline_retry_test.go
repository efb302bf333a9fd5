package saga

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestRetryDelayGrowsToMax: the first delay, doubled at each failure in a
// row, never past the maximum (nor overflowing far past it).
func TestRetryDelayGrowsToMax(t *testing.T) {
	d := &Deadlines{opts: deadlineOptions{retryFirst: time.Second, retryMax: 10 * time.Minute}}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second,
		10: 512 * time.Second, 11: 10 * time.Minute, 1000: 10 * time.Minute} {
		if got := d.retryDelay(attempt); got != want {
			t.Errorf("retryDelay(%d) = %s, want %s", attempt, got, want)
		}
	}
}

// TestUndeliveredDropsDeliveryErrors: Run logs what Poll returns except
// the failed deliveries Poll logged itself.
func TestUndeliveredDropsDeliveryErrors(t *testing.T) {
	de := &DeliveryError{Deadline: Deadline{ID: "a"}, Attempt: 1, Err: errors.New("handler")}
	other := errors.New("lease")
	if got := undelivered(errors.Join(de, de)); got != nil {
		t.Errorf("only delivery errors: %v, want nil", got)
	}
	if got := undelivered(errors.Join(de, errors.Join(de, other))); !errors.Is(got, other) || errors.Is(got, de.Err) {
		t.Errorf("mixed: %v, want the lease error alone", got)
	}
	if got := undelivered(fmt.Errorf("wrapped: %w", other)); !errors.Is(got, other) {
		t.Errorf("a wrapped error: %v", got)
	}
	if undelivered(nil) != nil {
		t.Errorf("nil is not nil")
	}
}

// fakeTarget is a Target on no engine.
type fakeTarget struct{ Target }

func (fakeTarget) SagaType() string { return "fake" }

// TestRetryDelayRefused: a retry delay that is not positive, or a maximum
// below the first, is refused with the typed error (no engine needed: no
// SQL runs).
func TestRetryDelayRefused(t *testing.T) {
	for _, o := range []DeadlineOption{WithRetryDelay(0, time.Second), WithRetryDelay(time.Minute, time.Second)} {
		var inv *InvalidOptionError
		if _, err := NewDeadlines(nil, []Target{fakeTarget{}}, o); !errors.As(err, &inv) || inv.Option != "retry delay" {
			t.Errorf("NewDeadlines: %v, want *InvalidOptionError on the retry delay", err)
		}
	}
}
