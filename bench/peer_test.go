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
