package lease

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestOptionsRefusedBeforeSQL(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"lease not above heartbeat", Options{HeartbeatInterval: time.Second, LeaseDuration: time.Second}},
		{"negative interval", Options{RebalanceInterval: -time.Second}},
		{"long instance id", Options{InstanceID: strings.Repeat("i", 256)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A nil engine: any SQL would panic, so a refusal proves none ran.
			_, err := New(nil, tc.opts)
			var inv *InvalidError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &inv) {
				t.Fatalf("want *InvalidError, got %v", err)
			}
		})
	}
	c, err := New(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.InstanceID()) != 32 || c.opts.LeaseDuration != 3*DefaultHeartbeatInterval {
		t.Errorf("defaults: id %q, lease %s", c.InstanceID(), c.opts.LeaseDuration)
	}
}

func TestClaimRefusedBeforeSQL(t *testing.T) {
	good := Claim{ConsumerType: "projection", ConsumerName: "n", Partition: 1, InstanceID: "i", Generation: 1}
	for _, tc := range []struct {
		name  string
		claim func(Claim) Claim
	}{
		{"empty type", func(c Claim) Claim { c.ConsumerType = ""; return c }},
		{"type over 32 bytes", func(c Claim) Claim { c.ConsumerType = strings.Repeat("t", 33); return c }},
		{"empty name", func(c Claim) Claim { c.ConsumerName = ""; return c }},
		{"negative partition", func(c Claim) Claim { c.Partition = -1; return c }},
		{"partition over SMALLINT", func(c Claim) Claim { c.Partition = 32768; return c }},
		{"no instance", func(c Claim) Claim { c.InstanceID = ""; return c }},
		{"generation 0", func(c Claim) Claim { c.Generation = 0; return c }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// nil engine and transaction: a refusal proves no SQL ran.
			if err := Fence(t.Context(), nil, nil, tc.claim(good)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
		})
	}
	if err := good.check(); err != nil {
		t.Errorf("a good claim refused: %v", err)
	}
}
