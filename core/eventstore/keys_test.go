package eventstore

import (
	"errors"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

func TestInvalidUTF8Offsets(t *testing.T) {
	cases := []struct {
		in     string
		offset int // -1: valid
	}{
		{`{"a":"é😀"}`, -1},
		{"{\"a\":\"\xff\xfe\"}", 6},
		{"{\"a\":\"\xc0\xaf\"}", 6},     // overlong "/"
		{"{\"a\":\"\xed\xa0\x80\"}", 6}, // UTF-16 surrogate D800
		{"ok\xf4\x90\x80\x80", 2},       // above U+10FFFF
		{"trunc\xe2\x82", 5},            // truncated sequence
		{"\xef\xbf\xbd", -1},            // U+FFFD itself is valid
	}
	for _, c := range cases {
		for _, err := range []error{checkUTF8("f", []byte(c.in)), checkKey("f", c.in, true)} {
			var ue *InvalidUTF8Error
			switch {
			case c.offset < 0 && err != nil:
				t.Errorf("%q: unexpected %v", c.in, err)
			case c.offset >= 0 && (!errors.As(err, &ue) || ue.Offset != c.offset || ue.Field != "f"):
				t.Errorf("%q: got %v, want offset %d", c.in, err, c.offset)
			case c.offset >= 0 && !(errors.Is(err, ErrInvalidUTF8) && errors.Is(err, ErrInvalidEvent)):
				t.Errorf("%q: %v is not both ErrInvalidUTF8 and ErrInvalidEvent", c.in, err)
			}
		}
	}
}

// On an engine that ignores trailing spaces (SQL Server), a key ending in a
// space is refused before any SQL; elsewhere it is a key like any other.
func TestTrailingSpaceKeys(t *testing.T) {
	for _, pads := range []bool{false, true} {
		s := New(&engine.Engine{Cat: &dialect.Catalogue{Identity: dialect.Identity{Name: "x"}, KeysIgnoreTrailingSpaces: pads}}, nil)
		for _, st := range []Stream{
			{AggregateType: "t", AggregateID: "acc-1 ", Events: []Event{{Type: "e", Payload: []byte(`{}`)}}},
			{AggregateType: "t ", AggregateID: "acc-1", Events: []Event{{Type: "e", Payload: []byte(`{}`)}}},
		} {
			err := s.checkStreams([]Stream{st})
			if pads && !errors.Is(err, ErrInvalidEvent) || !pads && err != nil {
				t.Errorf("pads=%v, %q/%q: got %v", pads, st.AggregateType, st.AggregateID, err)
			}
		}
		if err := s.checkStreams([]Stream{{AggregateType: "t", AggregateID: " acc-1", Events: []Event{{Type: "e", Payload: []byte(`{}`)}}}}); err != nil {
			t.Errorf("pads=%v: a leading space is kept apart by every engine, got %v", pads, err)
		}
	}
}
