package consumer

import (
	"errors"
	"testing"

	"github.com/tidemarkdb/tidemark/core/lease"
)

func TestCheckLeaseOptions(t *testing.T) {
	co, err := lease.New(nil, lease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"no leases, spread", Options{}, true},
		{"leases, spread", Options{Leases: co}, true},
		{"leases, single owner", Options{Leases: co, Distribution: lease.SingleOwner}, true},
		{"single owner without leases", Options{Distribution: lease.SingleOwner}, false},
		{"unknown distribution", Options{Leases: co, Distribution: "round-robin"}, false},
	} {
		err := checkLeaseOptions(tc.opts)
		if tc.ok != (err == nil) {
			t.Errorf("%s: got %v", tc.name, err)
		}
		var ie *InvalidOptionsError
		if err != nil && (!errors.Is(err, ErrInvalidOptions) || !errors.As(err, &ie) || ie.Field != "Distribution") {
			t.Errorf("%s: want *InvalidOptionsError on Distribution, got %#v", tc.name, err)
		}
	}
}
