package engine

import (
	"fmt"
	"strings"
	"time"
)

// UUIDText scans a UUID however the driver returns it (text in any case, raw
// bytes or a 16-byte array) as its canonical lower-case text. One scanner
// for the event store, the topics and the consumers.
type UUIDText string

// Scan implements sql.Scanner.
func (t *UUIDText) Scan(v any) error {
	switch x := v.(type) {
	case string:
		*t = UUIDText(lower(x))
	case []byte:
		if len(x) == 16 {
			*t = UUIDText(formatUUID(x))
		} else {
			*t = UUIDText(lower(string(x)))
		}
	case [16]byte:
		*t = UUIDText(formatUUID(x[:]))
	case nil:
		*t = ""
	default:
		return fmt.Errorf("cannot scan %T into a UUID", v)
	}
	return nil
}

// lower lower-cases a UUID's hex digits, allocating only when needed.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func formatUUID(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// UTCTime scans a timestamp returned as time.Time or as text (SQLite, the
// JDBC bridge), in UTC.
type UTCTime time.Time

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

// Scan implements sql.Scanner.
func (t *UTCTime) Scan(v any) error {
	switch x := v.(type) {
	case time.Time:
		*t = UTCTime(x.UTC())
		return nil
	case string:
		return t.parse(x)
	case []byte:
		return t.parse(string(x))
	case nil:
		*t = UTCTime(time.Time{})
		return nil
	}
	return fmt.Errorf("cannot scan %T into a time", v)
}

func (t *UTCTime) parse(s string) error {
	for _, l := range timeLayouts {
		if p, err := time.Parse(l, s); err == nil {
			*t = UTCTime(p.UTC())
			return nil
		}
	}
	return fmt.Errorf("cannot parse time %q", s)
}
