package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// Operator is the operator's controls of consumers (the Go API behind
// `tidemark consumers …`): list and status reads, pause, resume, resume
// past a poison message, retry or delete dead letters, skip a position and
// unsubscribe. An operator only changes rows; the runner of every instance
// acts on them at its next poll. Every operation checks its input before
// any SQL (typed errors), runs in one transaction and reports what it
// changed.
type Operator struct {
	r *Registry
}

// Operator returns the operator's controls on the registry's engine.
func (r *Registry) Operator() *Operator { return &Operator{r: r} }

// Ref names a consumer by its type and name, as an operator does.
type Ref struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// String is "type/name".
func (r Ref) String() string { return r.Type + "/" + r.Name }

// ParseRef reads "type/name" (the name may contain further slashes; the
// type may not). Its names are checked when an operation uses them.
func ParseRef(s string) (Ref, error) {
	typ, name, ok := strings.Cut(s, "/")
	if !ok || typ == "" || name == "" {
		return Ref{}, &InvalidNameError{Field: "consumer", Value: s, Reason: "want <type>/<name>, e.g. projection/account-summary"}
	}
	return Ref{Type: typ, Name: name}, nil
}

// Errors of the operator controls, for errors.Is; typed errors below wrap
// them.
var (
	// ErrInvalidSelector: a dead-letter selector that is not exactly one
	// of a row id, a source and key, or all.
	ErrInvalidSelector = errors.New("invalid dead-letter selector")
	// ErrNotSubscribed: the consumer has no checkpoint on the source (or
	// partition) named.
	ErrNotSubscribed = errors.New("consumer not subscribed")
	// ErrNoDeadLetter: a selector for one row or one key that matches no
	// dead letter.
	ErrNoDeadLetter = errors.New("no such dead letter")
)

// SelectorError says why a selector was refused.
type SelectorError struct {
	Selector Selector
	Reason   string
}

func (e *SelectorError) Error() string {
	return fmt.Sprintf("dead-letter selector %s: %s", e.Selector, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidSelector) hold.
func (e *SelectorError) Unwrap() error { return ErrInvalidSelector }

// NotSubscribedError is an operation on a source (or partition) the
// consumer has no checkpoint on.
type NotSubscribedError struct {
	Consumer  Ref
	Source    string
	Partition int // -1: the source as a whole
}

func (e *NotSubscribedError) Error() string {
	if e.Partition >= 0 {
		return fmt.Sprintf("consumer %s has no checkpoint on %s partition %d", e.Consumer, e.Source, e.Partition)
	}
	return fmt.Sprintf("consumer %s is not subscribed to %s", e.Consumer, e.Source)
}

// Unwrap makes errors.Is(err, ErrNotSubscribed) hold.
func (e *NotSubscribedError) Unwrap() error { return ErrNotSubscribed }

// NoDeadLetterError is a selector of one row or one key that matched no
// dead letter of the consumer.
type NoDeadLetterError struct {
	Consumer Ref
	Selector Selector
}

func (e *NoDeadLetterError) Error() string {
	return fmt.Sprintf("consumer %s has no dead letter matching %s", e.Consumer, e.Selector)
}

// Unwrap makes errors.Is(err, ErrNoDeadLetter) hold.
func (e *NoDeadLetterError) Unwrap() error { return ErrNoDeadLetter }

// Selector picks dead letters: exactly one of ID (one row), Source with
// Key (every dead letter of that key; Key may be "" for messages without
// one, so KeyGiven says it was given), or All.
type Selector struct {
	ID       string `json:"id,omitempty"`
	Source   string `json:"source,omitempty"`
	Key      string `json:"key,omitempty"`
	KeyGiven bool   `json:"-"`
	All      bool   `json:"all,omitempty"`
}

// ByID selects one dead-letter row.
func ByID(id string) Selector { return Selector{ID: id} }

// ByKey selects every dead letter of key on source.
func ByKey(source, key string) Selector { return Selector{Source: source, Key: key, KeyGiven: true} }

// AllDeadLetters selects every dead letter of the consumer.
func AllDeadLetters() Selector { return Selector{All: true} }

func (s Selector) String() string {
	switch {
	case s.All:
		return "all"
	case s.ID != "":
		return "id " + s.ID
	default:
		return fmt.Sprintf("source %q key %q", s.Source, s.Key)
	}
}

// check refuses, before any SQL, a selector that is not exactly one kind
// or whose parts the table cannot hold.
func (s Selector) check(r *Registry) error {
	kinds := 0
	if s.ID != "" {
		kinds++
	}
	if s.Source != "" || s.KeyGiven {
		kinds++
	}
	if s.All {
		kinds++
	}
	refuse := func(reason string) error { return &SelectorError{Selector: s, Reason: reason} }
	switch {
	case kinds != 1:
		return refuse("give exactly one of a row id, a source and key, or all")
	case s.ID != "":
		if _, err := uuid.Parse(s.ID); err != nil || len(s.ID) != 36 {
			return refuse("the row id is not a UUID")
		}
	case s.Source != "" || s.KeyGiven:
		if s.Source == "" {
			return refuse("a key needs its source")
		}
		if err := checkName("source name", s.Source, MaxSourceLength, r.e.Cat.KeysIgnoreTrailingSpaces, r.e.Cat.Identity.Name); err != nil {
			return err
		}
		if !utf8.ValidString(s.Key) || utf8.RuneCountInString(s.Key) > MaxKeyLength {
			return refuse(fmt.Sprintf("the key is not valid UTF-8 of at most %d characters", MaxKeyLength))
		}
	}
	return nil
}

// Changes is what an operation changed, row counts by kind.
type Changes struct {
	// State is the consumer's state after the operation, when it changed.
	State State `json:"state,omitempty"`
	// Released counts undelivered rows given a fresh budget (→ FAILED,
	// failure_count 0, due at once).
	Released int64 `json:"released"`
	// Waiting counts rows put back in line behind their key (→ WAITING).
	Waiting int64 `json:"waiting"`
	// Deleted counts undelivered rows deleted.
	Deleted int64 `json:"deleted"`
	// Skips counts skips recorded (a skip recorded again counts too).
	Skips int64 `json:"skips"`
	// SkipsDeleted and Checkpoints count the rows unsubscribe deleted.
	SkipsDeleted int64 `json:"skips_deleted"`
	Checkpoints  int64 `json:"checkpoints_deleted"`
	// ConsumerDeleted: the CONSUMERS row went with its last checkpoint.
	ConsumerDeleted bool `json:"consumer_deleted"`
}

// String summarises the non-zero counts for people.
func (c Changes) String() string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	if c.State != "" {
		parts = append(parts, "state "+string(c.State))
	}
	add(c.Released, "released with a fresh budget")
	add(c.Waiting, "back to WAITING")
	add(c.Deleted, "undelivered deleted")
	add(c.Skips, "skips recorded")
	add(c.SkipsDeleted, "skips deleted")
	add(c.Checkpoints, "checkpoints deleted")
	if c.ConsumerDeleted {
		parts = append(parts, "consumer row deleted")
	}
	if len(parts) == 0 {
		return "nothing changed"
	}
	return strings.Join(parts, ", ")
}

// resolve checks ref's names before any SQL and reads its row.
func (o *Operator) resolve(ctx context.Context, ref Ref) (Consumer, error) {
	if err := o.r.checkNames(ref.Type, ref.Name, nil); err != nil {
		return Consumer{}, err
	}
	c, err := o.r.Lookup(ctx, ref.Type, ref.Name)
	if err != nil {
		return Consumer{}, fmt.Errorf("consumer %s: %w", ref, err)
	}
	return c, nil
}

// inTx runs fn in one transaction (engine.InTx: retried whole within the
// core's bound on a transient error). fn fills a fresh Changes each
// attempt.
func (o *Operator) inTx(ctx context.Context, fn func(q engine.Querier, ch *Changes) error) (Changes, error) {
	var ch Changes
	err := o.r.e.InTx(ctx, engine.OpWrite, engine.DefaultTransientRetry, func(tx *sql.Tx) error {
		ch = Changes{}
		return fn(tx, &ch)
	})
	return ch, err
}

// Engine returns the engine the operator acts on.
func (o *Operator) Engine() *engine.Engine { return o.r.e }

// Ref is the consumer's type and name, as an operator names it.
func (c Consumer) Ref() Ref { return Ref{Type: c.Type, Name: c.Name} }
