// Package eventstore appends and reads event streams on any dialect: an
// optimistic-concurrency append whose global positions come from the
// dialect's strategy, stream loads, ordered reads up to the high-water mark
// across every event table, and snapshots.
package eventstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/log"
)

// ExpectedVersion is what an append expects of its stream. A stream's version
// is the sequence_no of its last event; the first event has sequence_no 0.
// The zero value is Any.
type ExpectedVersion int64

// Expected-version sentinels; use Exactly for an exact version.
const (
	Any          ExpectedVersion = 0  // no check
	NoStream     ExpectedVersion = -1 // the stream must be empty
	StreamExists ExpectedVersion = -2 // the stream must have at least one event
)

// Exactly expects the stream's last sequence_no to be v (v >= 0).
func Exactly(v int64) ExpectedVersion { return ExpectedVersion(v + 1) }

// Exact returns the exact version expected, and false for the sentinels.
func (v ExpectedVersion) Exact() (int64, bool) {
	if v > 0 {
		return int64(v) - 1, true
	}
	return 0, false
}

func (v ExpectedVersion) String() string {
	switch v {
	case Any:
		return "any version"
	case NoStream:
		return "no stream"
	case StreamExists:
		return "an existing stream"
	}
	return fmt.Sprintf("version %d", int64(v)-1)
}

// MaxKeyLength is the longest aggregate id, aggregate type or event type, in
// characters (the columns are VARCHAR(255)).
const MaxKeyLength = log.MaxKeyLength

// Event is an event to append.
type Event struct {
	// ID is the event's UUID; a UUIDv7 is generated when empty.
	ID   string
	Type string
	// Revision is the payload's schema revision (for upcasting).
	Revision int
	// Payload and Metadata are JSON documents, stored byte for byte.
	// Metadata may be nil (stored as NULL).
	Payload  []byte
	Metadata []byte
	// OccurredAt defaults to now; it is stored in UTC.
	OccurredAt time.Time
}

// Stream is one aggregate's events in an append.
type Stream struct {
	AggregateType string
	AggregateID   string
	Expected      ExpectedVersion
	Events        []Event
}

// Recorded is a stored event.
type Recorded struct {
	ID             string
	AggregateID    string
	AggregateType  string
	SequenceNo     int64
	Type           string
	Revision       int
	Payload        []byte
	Metadata       []byte
	OccurredAt     time.Time
	PartitionKey   int
	GlobalPosition int64
}

// Appended reports where an append's events landed, in append order.
type Appended struct {
	Positions []int64
	// Versions maps each stream (by "type/id") to its new version.
	Versions map[string]int64
}

// Errors callers branch on; the typed errors below wrap them.
var (
	ErrConcurrency    = errors.New("optimistic concurrency conflict")
	ErrDuplicateEvent = errors.New("duplicate event id")
	ErrInvalidEvent   = errors.New("invalid event")
	// ErrInvalidUTF8 is wrapped (with ErrInvalidEvent) by InvalidUTF8Error.
	ErrInvalidUTF8 = log.ErrInvalidUTF8
	// ErrAggregateIDTaken is wrapped by AggregateIDTakenError.
	ErrAggregateIDTaken = errors.New("aggregate id taken by another aggregate type")
)

// AggregateIDTakenError reports an append to an aggregate id that another
// aggregate type already uses in the same event table. The spec's
// UNIQUE (aggregate_id, sequence_no) spans every type sharing a table, so an
// id belongs to the first type that appended to it there; the other type's
// stream stays empty (Load returns nothing) and can never be appended to.
// Use another id, or give the type a table of its own.
type AggregateIDTakenError struct {
	Table         string
	AggregateID   string
	AggregateType string // the type the append was for
	OwnerType     string // the type that holds the id in Table
}

func (e *AggregateIDTakenError) Error() string {
	return fmt.Sprintf("aggregate id %q is already used by aggregate type %s in event table %s, which %s shares: ids are unique across the types of one table",
		e.AggregateID, e.OwnerType, e.Table, e.AggregateType)
}

// Unwrap makes errors.Is(err, ErrAggregateIDTaken) hold.
func (e *AggregateIDTakenError) Unwrap() error { return ErrAggregateIDTaken }

// InvalidUTF8Error reports a key or document that is not valid UTF-8; the
// store's wrap ErrInvalidEvent as well (see log.InvalidUTF8Error).
type InvalidUTF8Error = log.InvalidUTF8Error

// ConcurrencyError reports an expected version the stream did not have.
type ConcurrencyError struct {
	AggregateType string
	AggregateID   string
	Expected      ExpectedVersion
	// Actual is the stream's version when the conflict was found; -1 for an
	// empty stream; UnknownVersion when ReadErr is set. It is always a
	// version the store read, never a default.
	Actual int64
	// ReadErr is set when the engine refused the append's insert but the
	// read of the stream's version after it failed: the conflict is
	// certain, the version unknown.
	ReadErr error
}

// UnknownVersion is a ConcurrencyError's Actual when its version read
// failed (ReadErr).
const UnknownVersion int64 = -2

func (e *ConcurrencyError) Error() string {
	if e.ReadErr != nil {
		return fmt.Sprintf("append to %s %q expected %s but the engine refused it; the stream's version could not be read: %v", e.AggregateType, e.AggregateID, e.Expected, e.ReadErr)
	}
	return fmt.Sprintf("append to %s %q expected %s but the stream is at version %d", e.AggregateType, e.AggregateID, e.Expected, e.Actual)
}

// Unwrap makes errors.Is(err, ErrConcurrency) hold, and errors.Is and As
// reach the version read's error when there is one.
func (e *ConcurrencyError) Unwrap() []error {
	if e.ReadErr != nil {
		return []error{ErrConcurrency, e.ReadErr}
	}
	return []error{ErrConcurrency}
}

// DuplicateEventError reports an event id that is already stored.
type DuplicateEventError struct {
	Table string
	Cause error
}

func (e *DuplicateEventError) Error() string {
	return fmt.Sprintf("an event id of this append is already stored in %s: %v", e.Table, e.Cause)
}

// Unwrap makes errors.Is(err, ErrDuplicateEvent) hold, and keeps the
// classified database error (sqlerr.ErrDuplicateEvent, the driver's own
// error) reachable.
func (e *DuplicateEventError) Unwrap() []error { return []error{ErrDuplicateEvent, e.Cause} }

// InvalidEventError reports input refused before it reached the database.
type InvalidEventError struct {
	Field  string
	Reason string
}

func (e *InvalidEventError) Error() string { return "invalid " + e.Field + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidEvent) hold.
func (e *InvalidEventError) Unwrap() error { return ErrInvalidEvent }

// PartitionKey is the stable partition of an aggregate id: the log's
// partition function (FNV-1a, 32-bit, over the id's UTF-8 bytes, modulo
// the partition count).
func PartitionKey(aggregateID string, partitions int) int {
	return log.Partition(aggregateID, partitions)
}

// IsConflict reports whether err is an optimistic-concurrency conflict.
func IsConflict(err error) bool { return errors.Is(err, ErrConcurrency) }
