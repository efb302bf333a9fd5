package main

import (
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // reversed: percentiles sorts
	}
	tests := []struct {
		name string
		lat  []time.Duration
		qs   []float64
		want []time.Duration
	}{
		{"empty", nil, []float64{0.5, 0.99}, ms(0, 0)},
		{"one", ms(7), []float64{0.5, 0.99}, ms(7, 7)},
		{"hundred", ms(hundred...), []float64{0.5, 0.99, 1}, ms(50, 99, 100)},
		{"unsorted four", ms(40, 10, 30, 20), []float64{0.5, 0.75, 0.99}, ms(20, 30, 40)},
		{"zero quantile is the minimum", ms(3, 1, 2), []float64{0}, ms(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := percentiles(tt.lat, tt.qs...)
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("q=%v: got %v, want %v", tt.qs[i], got[i], tt.want[i])
				}
			}
		})
	}
}

// applied counts a position once however often a Transactional apply ran
// it, and signals only when every wanted position was seen.
func TestAppliedCountsDistinctPositions(t *testing.T) {
	a := newApplied(3)
	for _, pos := range []int64{5, 5, 7, 5, 7} {
		a.add(pos)
	}
	select {
	case <-a.full:
		t.Fatal("full after 2 distinct positions of 3")
	default:
	}
	a.add(9)
	select {
	case <-a.full:
	default:
		t.Fatal("not full after 3 distinct positions")
	}
	a.add(11) // past want: must not close full again (a panic)
	if len(a.seen) != 4 {
		t.Fatalf("seen %d positions, want 4", len(a.seen))
	}
	open := newApplied(-1) // the latency cell's: never full
	open.add(1)
	select {
	case <-open.full:
		t.Fatal("an unbounded counter signalled full")
	default:
	}
}
