package consumer

import (
	"testing"
	"time"
)

func TestDeliveryStatusMethods(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		s                 DeliveryStatus
		holds, retryable  bool
		dueAt, dueBefore  bool // next retry at now; an hour later
		dueWithoutAnyTime bool // next retry zero
	}{
		{StatusFailed, true, false, true, false, true},
		{StatusWaiting, true, false, true, true, true},
		{StatusHalted, true, false, true, true, true},
		{StatusDeadLetterKey, true, true, false, false, false},
		{StatusDeadLetter, false, true, false, false, false},
	} {
		if got := c.s.Holds(); got != c.holds {
			t.Errorf("%s.Holds() = %v", c.s, got)
		}
		if got := c.s.Retryable(); got != c.retryable {
			t.Errorf("%s.Retryable() = %v", c.s, got)
		}
		if got := c.s.Due(now, now); got != c.dueAt {
			t.Errorf("%s.Due(now, now) = %v", c.s, got)
		}
		if got := c.s.Due(now.Add(time.Hour), now); got != c.dueBefore {
			t.Errorf("%s.Due(now+1h, now) = %v", c.s, got)
		}
		if got := c.s.Due(time.Time{}, now); got != c.dueWithoutAnyTime {
			t.Errorf("%s.Due(zero, now) = %v", c.s, got)
		}
	}
}
