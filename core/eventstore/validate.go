package eventstore

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/internal/jsonvalid"
)

// checkStreams checks every key and event of an append, so bad input is
// refused before any SQL and nothing of the append is stored.
func (s *Store) checkStreams(streams []Stream) error {
	var size, events int64
	for _, st := range streams {
		if err := s.checkKey("aggregate id", st.AggregateID); err != nil {
			return err
		}
		if err := s.checkKey("aggregate type", st.AggregateType); err != nil {
			return err
		}
		for i, ev := range st.Events {
			if err := checkEvent(i, ev); err != nil {
				return err
			}
			if n, ok := s.e.Cat.Facts.TextFits(ev.Type, 255); !ok {
				return s.tooLong(fmt.Sprintf("event %d type", i), n, 255)
			}
			if ev.ID != "" {
				if _, err := uuid.Parse(ev.ID); err != nil {
					return &InvalidEventError{Field: fmt.Sprintf("event %d id", i), Reason: "is not a UUID"}
				}
			}
			size += int64(len(ev.Payload) + len(ev.Metadata) + len(ev.Type) + len(st.AggregateID) + len(st.AggregateType))
			events++
		}
	}
	if s.e.MaxStatementBytes() > 0 {
		return s.e.CheckStatementSize(fmt.Sprintf("append of %d events", events), size)
	}
	return nil
}

// tooLong refuses a key of at most 255 characters that the engine's column
// cannot hold in the unit its VARCHAR counts (EngineFacts.TextUnit).
func (s *Store) tooLong(field string, units, length int) error {
	return &InvalidEventError{Field: field, Reason: fmt.Sprintf("is %d %s long; %s's column holds %d", units,
		s.e.Cat.Facts.TextUnit.Name(), s.e.Cat.Identity.Name, length)}
}

// checkKey is checkKey plus what the engine cannot keep apart: where it
// compares keys ignoring trailing spaces, a key ending in one is refused
// (it would be the same stream as the key without it).
func (s *Store) checkKey(field, v string) error {
	if err := checkKey(field, v, false); err != nil {
		return err
	}
	f := s.e.Cat.Facts
	if field == "aggregate id" {
		if n, length, ok := f.AggregateIDFits(v); !ok {
			return s.tooLong(field, n, length)
		}
	} else if n, ok := f.TextFits(v, 255); !ok {
		return s.tooLong(field, n, 255)
	}
	if s.e.Cat.KeysIgnoreTrailingSpaces && strings.HasSuffix(v, " ") {
		return &InvalidEventError{Field: field, Reason: fmt.Sprintf("%q ends with a space, which %s ignores when it compares keys", v, s.e.Cat.Identity.Name)}
	}
	return nil
}

func checkKey(field, v string, allowEmpty bool) error {
	if !allowEmpty && v == "" {
		return &InvalidEventError{Field: field, Reason: "is empty"}
	}
	switch c := log.CheckKey(v); c.Fault {
	case log.KeyUTF8:
		return invalidUTF8(field, c.Offset)
	case log.KeyTooLong:
		return &InvalidEventError{Field: field, Reason: fmt.Sprintf("is %d characters long, the limit is %d", c.Length, MaxKeyLength)}
	case log.KeyNUL:
		return &InvalidEventError{Field: field, Reason: "contains a NUL character"}
	}
	return nil
}

// checkEvent checks one event. A valid event costs the checks alone: the
// field names of the errors are built only for an event that fails
// (fmt.Sprintf and the concatenations were 4 allocations per event;
// BenchmarkCheckEvents: 0 now).
func checkEvent(i int, ev Event) error {
	if keyOK(ev.Type) && utf8.Valid(ev.Payload) && utf8.Valid(ev.Metadata) &&
		jsonvalid.Valid(ev.Payload) && (ev.Metadata == nil || jsonvalid.Valid(ev.Metadata)) {
		return nil
	}
	return eventError(i, ev)
}

// keyOK is checkKey's verdict on a non-empty key, without the error.
func keyOK(v string) bool {
	return v != "" && log.CheckKey(v).Fault == log.KeyOK
}

// eventError is the error of an event checkEvent refused, naming the first
// failing field.
func eventError(i int, ev Event) error {
	field := fmt.Sprintf("event %d", i)
	if err := checkKey(field+" type", ev.Type, false); err != nil {
		return err
	}
	if err := checkUTF8(field+" payload", ev.Payload); err != nil {
		return err
	}
	if err := checkUTF8(field+" metadata", ev.Metadata); err != nil {
		return err
	}
	// jsonvalid accepts exactly what encoding/json.Valid accepts, several
	// times cheaper (BenchmarkCheckEvents; figures in docs/performance.md).
	if !jsonvalid.Valid(ev.Payload) {
		return &InvalidEventError{Field: field + " payload", Reason: "is not a JSON document"}
	}
	if ev.Metadata != nil && !jsonvalid.Valid(ev.Metadata) {
		return &InvalidEventError{Field: field + " metadata", Reason: "is not a JSON document"}
	}
	return nil
}

// checkUTF8 returns an *InvalidUTF8Error naming field and the offset of the
// first invalid byte of b, or nil.
func checkUTF8(field string, b []byte) error {
	if off, bad := log.InvalidUTF8(b); bad {
		return invalidUTF8(field, off)
	}
	return nil
}

func invalidUTF8(field string, offset int) error {
	return &InvalidUTF8Error{Field: field, Offset: offset, Refusal: ErrInvalidEvent}
}
