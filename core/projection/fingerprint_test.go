package projection

import (
	"reflect"
	"testing"
)

func TestNextFingerprint(t *testing.T) {
	for _, c := range []struct{ stored, declared, want string }{
		{"", "a,b,c,d", "a,b,c,d"},                        // first start
		{"a,b,c,d", "a,b,c,d", "a,b,c,d"},                 // unchanged
		{"a,b,c,d", "a,x,c,d", "a,x,c,d;a,b,c,d"},         // accepted or rebuilt
		{"a,x,c,d;a,b,c,d", "a,x,c,d", "a,x,c,d;a,b,c,d"}, // unchanged keeps the previous
		{";a,b,c,d", "a,y,c,d", "a,y,c,d;a,b,c,d"},        // accepted by name, filled at start
		{"a,x,c,d;a,b,c,d", "a,y,c,d", "a,y,c,d;a,x,c,d"}, // the previous is the one replaced
	} {
		if got := nextFingerprint(c.stored, c.declared); got != c.want {
			t.Errorf("nextFingerprint(%q, %q) = %q, want %q", c.stored, c.declared, got, c.want)
		}
	}
}

func TestChangedParts(t *testing.T) {
	if got := changedParts("a,b,c,d", "a,x,c,y"); !reflect.DeepEqual(got, []string{"listeners", "storage"}) {
		t.Errorf("changedParts = %v", got)
	}
	if got := changedParts("a,b", "a,b,c,d"); !reflect.DeepEqual(got, []string{"fields", "storage"}) {
		t.Errorf("changedParts of a short fingerprint = %v", got)
	}
}
