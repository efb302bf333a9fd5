package consumer

import (
	"context"
	"errors"
	"fmt"
)

// Errors callers branch on with errors.Is; the typed errors below wrap them.
var (
	// ErrInvalidName: a consumer, type or source name the database cannot
	// keep apart or store; refused before any SQL.
	ErrInvalidName = errors.New("invalid consumer name")
	// ErrNameCollision: the database holds a consumer whose names it does
	// not tell apart from the ones given (its collation ignores case,
	// accents or trailing spaces).
	ErrNameCollision = errors.New("consumer names collide")
	// ErrNotFound: no consumer row.
	ErrNotFound = errors.New("consumer not found")
	// ErrTransition: the consumer is not in a state the transition starts
	// from.
	ErrTransition = errors.New("consumer state transition refused")
	// ErrStale: a checkpoint write fenced off by a newer epoch.
	ErrStale = errors.New("checkpoint epoch is stale")
)

// InvalidNameError says which name was refused and why.
type InvalidNameError struct {
	Field  string // "consumer type", "consumer name" or "source name"
	Value  string
	Reason string
}

func (e *InvalidNameError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidName) hold.
func (e *InvalidNameError) Unwrap() error { return ErrInvalidName }

// NameCollisionError is a subscribe whose names the database merged with
// an existing consumer's.
type NameCollisionError struct {
	Type, Name                 string // asked for
	ExistingType, ExistingName string // what the database holds
}

func (e *NameCollisionError) Error() string {
	return fmt.Sprintf("consumer %s/%q: the database does not tell it apart from the existing consumer %s/%q; choose names that differ in more than case, accents or trailing spaces",
		e.Type, e.Name, e.ExistingType, e.ExistingName)
}

// Unwrap makes errors.Is(err, ErrNameCollision) hold.
func (e *NameCollisionError) Unwrap() error { return ErrNameCollision }

// TransitionError is a state change the consumer's current state does not
// allow (or that another writer made first).
type TransitionError struct {
	ID string
	// Consumer is the consumer's type and name when known (the operator's
	// paths), which the message then names instead of ID.
	Consumer Ref
	From, To State
	Actual   State
}

func (e *TransitionError) Error() string {
	if e.Consumer == (Ref{}) {
		return fmt.Sprintf("consumer %s: cannot go from %s to %s (it is %s)", e.ID, e.From, e.To, e.Actual)
	}
	return fmt.Sprintf("consumer %s: cannot go from %s to %s (it is %s; id %s)", e.Consumer, e.From, e.To, e.Actual, e.ID)
}

// Unwrap makes errors.Is(err, ErrTransition) hold.
func (e *TransitionError) Unwrap() error { return ErrTransition }

// label names the consumer as the operator typed it, with its id:
// "projection/orders (id 0f…)".
func (c Consumer) label() string { return c.Ref().String() + " (id " + c.ID + ")" }

// label names consumer id for an error message (see Consumer.label); the
// id alone when its row cannot be read.
func (r *Registry) label(ctx context.Context, id string) string {
	c, err := r.Get(context.WithoutCancel(ctx), id)
	if err != nil {
		return id
	}
	return c.label()
}
