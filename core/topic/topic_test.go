package topic

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// TestCheckMessage: bad input is refused with a typed error wrapping
// ErrInvalidMessage (conformance capture/key_refusals_before_sql shows it
// happens before any SQL, on every engine).
func TestCheckMessage(t *testing.T) {
	ok := Message{Key: "k", Type: "t", Payload: []byte(`{}`)}
	with := func(f func(*Message)) Message { m := ok; f(&m); return m }
	tests := []struct {
		name string
		m    Message
		want any
	}{
		{"valid", ok, nil},
		{"no key", with(func(m *Message) { m.Key = "" }), nil},
		{"255 characters", with(func(m *Message) { m.Key = strings.Repeat("ü", 255) }), nil},
		{"256 characters", with(func(m *Message) { m.Key = strings.Repeat("ü", 256) }), new(*KeyTooLongError)},
		{"key not UTF-8", with(func(m *Message) { m.Key = "a\xc3" }), new(*InvalidUTF8Error)},
		{"key with NUL", with(func(m *Message) { m.Key = "a\x00b" }), new(*InvalidMessageError)},
		{"no type", with(func(m *Message) { m.Type = "" }), new(*InvalidMessageError)},
		{"payload not JSON", with(func(m *Message) { m.Payload = []byte("{") }), new(*InvalidMessageError)},
		{"payload not UTF-8", with(func(m *Message) { m.Payload = []byte("\"\xff\"") }), new(*InvalidUTF8Error)},
		{"metadata not JSON", with(func(m *Message) { m.Metadata = []byte("x") }), new(*InvalidMessageError)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkMessage(0, tc.m)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.As(err, tc.want) || !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("got %v (%T), want %T wrapping ErrInvalidMessage", err, err, tc.want)
			}
		})
	}
}

func TestInvalidUTF8Offset(t *testing.T) {
	var ue *InvalidUTF8Error
	if err := checkText(2, "key", "ab\xffc"); !errors.As(err, &ue) || ue.Offset != 2 || ue.Index != 2 {
		t.Fatalf("got %v", err)
	}
}

// TestPartitionKeyMatchesEventStore: a key lands in the same partition as
// an aggregate id of the same value.
func TestPartitionKeyMatchesEventStore(t *testing.T) {
	for _, n := range []int{1, 8, 16, 1024} {
		for _, k := range []string{"", "acc-1", "Straße", strings.Repeat("x", 255)} {
			if got, want := PartitionKey(k, n), eventstore.PartitionKey(k, n); got != want {
				t.Errorf("PartitionKey(%q, %d) = %d, event store %d", k, n, got, want)
			}
		}
	}
}

func TestMissingHistoryError(t *testing.T) {
	var err error = &MissingHistoryError{Topic: CaptureTopic, Position: 3, TopicStart: 9}
	var mh *MissingHistoryError
	if !errors.Is(err, ErrMissingHistory) || !errors.As(err, &mh) || mh.TopicStart != 9 {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(err.Error(), "after position 3") || !strings.Contains(err.Error(), "at or below 9") {
		t.Errorf("message %q", err.Error())
	}
}
