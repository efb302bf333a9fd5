package log

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckKey(t *testing.T) {
	cases := []struct {
		in   string
		want KeyCheck
	}{
		{"acc-1", KeyCheck{}},
		{strings.Repeat("é", MaxKeyLength), KeyCheck{}}, // 510 bytes, 255 characters
		{strings.Repeat("a", MaxKeyLength+1), KeyCheck{Fault: KeyTooLong, Length: MaxKeyLength + 1}},
		{"ab\xffc", KeyCheck{Fault: KeyUTF8, Offset: 2}},
		{"a\x00b", KeyCheck{Fault: KeyNUL}},
	}
	for _, c := range cases {
		if got := CheckKey(c.in); got != c.want {
			t.Errorf("CheckKey(%.20q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestInvalidUTF8Error(t *testing.T) {
	refusal := errors.New("refused")
	store := &InvalidUTF8Error{Field: "aggregate id", Offset: 3, Refusal: refusal}
	if got, want := store.Error(), "invalid aggregate id: not valid UTF-8 at byte offset 3"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	msg := &InvalidUTF8Error{Record: "message", Index: 2, Field: "key", Offset: 1}
	if got, want := msg.Error(), "message 2: key is not valid UTF-8 (first invalid byte at offset 1)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(store, ErrInvalidUTF8) || !errors.Is(store, refusal) || !errors.Is(msg, ErrInvalidUTF8) {
		t.Errorf("InvalidUTF8Error does not unwrap to ErrInvalidUTF8 and its Refusal")
	}
}

// TestPartitionStable pins the partition function: every log's stored
// partition_key depends on it.
func TestPartitionStable(t *testing.T) {
	for _, c := range []struct {
		key  string
		n    int
		want int
	}{{"", 8, int(2166136261 % 8)}, {"acc-1", 1, 0}} {
		if got := Partition(c.key, c.n); got != c.want {
			t.Errorf("Partition(%q, %d) = %d, want %d", c.key, c.n, got, c.want)
		}
	}
}
