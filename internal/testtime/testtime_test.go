package testtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestScaleAtLeastEnv(t *testing.T) {
	t.Setenv(EnvVar, "3")
	if s := Scale(); s < 3 {
		t.Fatalf("Scale() = %v with %s=3", s, EnvVar)
	}
	if d := D(time.Second); d < 3*time.Second {
		t.Fatalf("D(1s) = %v with scale ≥ 3", d)
	}
}

func TestScaleNeverBelowOne(t *testing.T) {
	for _, v := range []string{"", "0", "0.2", "-4", "junk"} {
		t.Setenv(EnvVar, v)
		if s := Scale(); s < 1 {
			t.Fatalf("Scale() = %v with %s=%q", s, EnvVar, v)
		}
	}
}

func TestPollReportsState(t *testing.T) {
	err := Poll(context.Background(), "the thing", time.Millisecond, time.Millisecond,
		func() (bool, error) { return false, nil },
		func() string { return "mark=7" })
	if err == nil || !strings.Contains(err.Error(), "the thing") || !strings.Contains(err.Error(), "mark=7") {
		t.Fatalf("Poll error = %v, want the thing awaited and the state", err)
	}
	boom := errors.New("boom")
	if err := Poll(context.Background(), "x", time.Minute, time.Millisecond,
		func() (bool, error) { return false, boom }, nil); !errors.Is(err, boom) {
		t.Fatalf("Poll error = %v, want boom wrapped", err)
	}
	n := 0
	if err := Poll(context.Background(), "x", time.Minute, time.Millisecond,
		func() (bool, error) { n++; return n == 3, nil }, nil); err != nil {
		t.Fatal(err)
	}
}
