// Package log holds what the event store and the capture topic share as
// positioned, partitioned logs bounded by a high-water mark: the Waker a
// follower waits on, the partition function, the key and UTF-8 checks,
// the page read (the mark and the page in one read transaction) and
// Follow. It knows nothing of either log's rows: a caller describes its
// records with a Source.
package log

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"
)

// Waker tells a follower the mark moved; *hwm.Advancer implements it, and
// so does a waker listening for the mark's moves across processes.
type Waker interface {
	// Changed returns a channel closed when the mark next moves.
	Changed() <-chan struct{}
}

// Partition is the partition of a key among n partitions: FNV-1a (32-bit)
// over the key's UTF-8 bytes, modulo n. Every log partitions with it, so a
// key is in the same partition on each.
func Partition(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// MaxKeyLength is the most characters (runes) a key may have: the key
// columns are VARCHAR(255).
const MaxKeyLength = 255

// ErrInvalidUTF8 is wrapped by InvalidUTF8Error.
var ErrInvalidUTF8 = errors.New("invalid UTF-8")

// InvalidUTF8Error reports a key or document that is not valid UTF-8 (stray
// bytes, overlong forms such as C0 AF, UTF-16 surrogates such as ED A0 80).
// Engines differ on such text: some replace it with U+FFFD, some refuse it
// with raw errors, some store it; a log refuses it before any SQL.
type InvalidUTF8Error struct {
	// Record names what Index counts ("message"), empty where Field names
	// its record itself ("event 2 payload").
	Record string
	Index  int    // the record's index in its batch, when Record is set
	Field  string // e.g. "aggregate id", "key"
	Offset int    // byte offset of the first invalid byte
	// Refusal is the caller's error for bad input, which this one wraps
	// besides ErrInvalidUTF8.
	Refusal error
}

func (e *InvalidUTF8Error) Error() string {
	if e.Record == "" {
		return fmt.Sprintf("invalid %s: not valid UTF-8 at byte offset %d", e.Field, e.Offset)
	}
	return fmt.Sprintf("%s %d: %s is not valid UTF-8 (first invalid byte at offset %d)", e.Record, e.Index, e.Field, e.Offset)
}

// Unwrap makes errors.Is hold for ErrInvalidUTF8 and the Refusal.
func (e *InvalidUTF8Error) Unwrap() []error {
	if e.Refusal == nil {
		return []error{ErrInvalidUTF8}
	}
	return []error{ErrInvalidUTF8, e.Refusal}
}

// InvalidUTF8 returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence, and whether there is one. utf8.Valid is
// the whole cost on valid input; the offset is searched for only on
// failure.
func InvalidUTF8(b []byte) (int, bool) {
	if utf8.Valid(b) {
		return 0, false
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i, true
		}
		i += n
	}
	return len(b), true
}

// InvalidUTF8String is InvalidUTF8 for a string, without copying a valid
// one.
func InvalidUTF8String(s string) (int, bool) {
	if utf8.ValidString(s) {
		return 0, false
	}
	return InvalidUTF8([]byte(s))
}

// KeyFault is what CheckKey finds wrong with a key.
type KeyFault int

// The faults of a key, in the order CheckKey looks for them.
const (
	KeyOK      KeyFault = iota
	KeyUTF8             // not valid UTF-8: Offset says where
	KeyTooLong          // over MaxKeyLength characters: Length says how many
	KeyNUL              // contains a NUL character, which no engine's text column stores faithfully
)

// KeyCheck is CheckKey's verdict.
type KeyCheck struct {
	Fault  KeyFault
	Offset int // of the first invalid byte, for KeyUTF8
	Length int // in characters, for KeyTooLong
}

// CheckKey checks a key the way every log stores one: valid UTF-8, at most
// MaxKeyLength characters, no NUL. A valid key costs the checks alone.
func CheckKey(v string) KeyCheck {
	if off, bad := InvalidUTF8String(v); bad {
		return KeyCheck{Fault: KeyUTF8, Offset: off}
	}
	if len(v) > MaxKeyLength {
		if n := utf8.RuneCountInString(v); n > MaxKeyLength {
			return KeyCheck{Fault: KeyTooLong, Length: n}
		}
	}
	if strings.IndexByte(v, 0) >= 0 {
		return KeyCheck{Fault: KeyNUL}
	}
	return KeyCheck{}
}
