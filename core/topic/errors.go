package topic

import (
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/log"
)

// ErrInvalidMessage is wrapped by every refusal of bad input at publish
// (*InvalidMessageError, *KeyTooLongError, *InvalidUTF8Error): refused
// before any SQL, nothing stored.
var ErrInvalidMessage = errors.New("invalid message")

// InvalidMessageError is a message field the topic cannot store.
type InvalidMessageError struct {
	Index  int // the message's index in the publish
	Field  string
	Reason string
}

func (e *InvalidMessageError) Error() string {
	return fmt.Sprintf("message %d: %s %s", e.Index, e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidMessage) hold.
func (e *InvalidMessageError) Unwrap() error { return ErrInvalidMessage }

// KeyTooLongError is a message key over MaxKeyLength characters, or over
// what the engine's key column holds in the unit its VARCHAR counts.
type KeyTooLongError struct {
	Index  int
	Length int // in Unit
	Limit  int
	// Unit is what Length and Limit count: "characters", or the engine's
	// unit (dialect.TextUnit.Name) when the key fits in characters only.
	Unit string
}

func (e *KeyTooLongError) Error() string {
	unit := e.Unit
	if unit == "" {
		unit = "characters"
	}
	return fmt.Sprintf("message %d: key is %d %s long, the limit is %d", e.Index, e.Length, unit, e.Limit)
}

// Unwrap makes errors.Is(err, ErrInvalidMessage) hold.
func (e *KeyTooLongError) Unwrap() error { return ErrInvalidMessage }

// InvalidUTF8Error is a text field that is not valid UTF-8: the log's
// error, naming the message (Record "message", Index) and wrapping
// ErrInvalidMessage.
type InvalidUTF8Error = log.InvalidUTF8Error

// ErrMissingHistory is wrapped by *MissingHistoryError.
var ErrMissingHistory = errors.New("missing history")

// MissingHistoryError is a read after a position below the topic's start:
// the messages in (Position, TopicStart] were deleted by retention. The
// consumer runtime turns it into the incomplete-history mark and the
// MISSING_HISTORY halt.
type MissingHistoryError struct {
	Topic      string
	Position   int64 // the position the read continued after
	TopicStart int64 // every message at or below it is deleted
}

func (e *MissingHistoryError) Error() string {
	return fmt.Sprintf("topic %s: reading after position %d, but every message at or below %d was deleted by retention", e.Topic, e.Position, e.TopicStart)
}

// Unwrap makes errors.Is(err, ErrMissingHistory) hold.
func (e *MissingHistoryError) Unwrap() error { return ErrMissingHistory }

// InvalidTopicNameError is a read-model topic name the topic column (or
// its source name) cannot hold, refused before any SQL.
type InvalidTopicNameError struct {
	Name   string
	Reason string
}

func (e *InvalidTopicNameError) Error() string {
	return fmt.Sprintf("read-model topic name %q %s", e.Name, e.Reason)
}

// ErrNoRecord is wrapped by *NoRecordError.
var ErrNoRecord = errors.New("no such record")

// NoRecordError is a read-model record that is not there: no message with
// ID (ReadByID), or none of Key (Latest), on Topic.
type NoRecordError struct {
	Topic string
	ID    string // set by ReadByID
	Key   string // set by Latest
}

func (e *NoRecordError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("read-model topic %s: no message %s", e.Topic, e.ID)
	}
	return fmt.Sprintf("read-model topic %s: no message of key %q", e.Topic, e.Key)
}

// Unwrap makes errors.Is(err, ErrNoRecord) hold.
func (e *NoRecordError) Unwrap() error { return ErrNoRecord }
