package eventstore

import "testing"

// nilNudger stands for *hwm.Advancer: a pointer type with a Nudge method.
type nilNudger struct{ n int }

func (p *nilNudger) Nudge() { p.n++ }

// A nil pointer passed as the Nudger (a caller's `var adv *hwm.Advancer`)
// must behave like no nudger, not panic on the first append's nudge.
func TestNewTreatsATypedNilNudgerAsNone(t *testing.T) {
	var p *nilNudger
	s := &Store{}
	// New needs an engine; the check is the same one New runs.
	s.nudger = normaliseNudger(p)
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("nudge with a nil *Advancer-like nudger panicked: %v", r)
		}
	}()
	s.nudge()
}
