// Package saga runs sagas: long-running processes whose state is kept per
// instance in a saga table, driven by events delivered through the durable
// consumer runtime (core/consumer) and by deadlines they schedule.
//
// A Saga[S] declares the saga type, its state S, the event types that start
// an instance, those that correlate to an existing one (each with how to
// read the instance's saga id off the event) and a handler per deadline
// name. A Store binds it to an engine; its Handler is a Transactional
// consumer handler, so an instance's state, its deadlines and the
// consumer's checkpoint commit in one transaction. Every update is
// optimistic on the instance's version: a concurrent update of the same
// instance makes the apply a transient ConflictError, re-applied from a
// fresh read. Deadlines are delivered by Deadlines (one poller per
// database holding the deadline lock), each exactly once, in one
// transaction with the saga's update.
package saga

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/projection"
)

// Codec (de)serialises saga states, event payloads and deadline payloads;
// it is the projections' codec (JSON by default).
type Codec = projection.Codec

// JSON is the default codec, encoding/json.
type JSON = projection.JSON

// Complete, returned by an event or deadline handler, completes the saga:
// its state is saved with completed_at set to the database clock and its
// deadlines are cancelled, in the same transaction. A completed saga
// receives no further event or deadline.
var Complete = errors.New("saga: complete")

// ErrInvalidDeclaration is wrapped by DeclarationError.
var ErrInvalidDeclaration = errors.New("invalid saga declaration")

// DeclarationError reports a declaration or an option refused before any
// SQL runs.
type DeclarationError struct {
	SagaType string
	What     string
}

func (e *DeclarationError) Error() string { return fmt.Sprintf("saga %q: %s", e.SagaType, e.What) }

// Unwrap makes errors.Is(err, ErrInvalidDeclaration) hold.
func (e *DeclarationError) Unwrap() error { return ErrInvalidDeclaration }

// Event is an event as a handler gets it: its payload decoded into E and
// the stored event.
type Event[E any] struct {
	Value    E
	Recorded eventstore.Recorded
}

// route is what the saga does with one event type: read the instance's
// saga id off the event and, given the state, apply it.
type route[S any] struct {
	starts bool
	decode func(rec eventstore.Recorded, codec Codec) (sagaID string, apply applyFn[S], err error)
}

// applyFn runs a handler on a state inside a handler scope.
type applyFn[S any] func(sc *scope, s *S) error

// Saga declares a saga type with state S. Declare it once at startup; it
// is not safe to change while a Store uses it.
type Saga[S any] struct {
	typ       string
	table     string
	codec     Codec
	init      func(sagaID string) S
	routes    map[string]route[S]
	deadlines map[string]func(sc *scope, payload []byte, codec Codec, s *S) error
	errs      []error
}

// Option sets a saga's optional attributes.
type Option func(*options)

type options struct {
	table string
	codec Codec
	init  any
}

// WithTable keeps the saga's instances in table (the Go form of
// @SagaTable). The engine must have been opened with it among
// schema.Config.SagaTables; Open refuses another before any SQL.
func WithTable(table string) Option { return func(o *options) { o.table = table } }

// WithCodec sets how states and payloads are (de)serialised (default JSON).
func WithCodec(c Codec) Option { return func(o *options) { o.codec = c } }

// WithInit sets how a new instance's state starts (default S's zero
// value); fn must be a func(sagaID string) S of the saga's S.
func WithInit[S any](fn func(sagaID string) S) Option { return func(o *options) { o.init = fn } }

// New declares a saga of sagaType (saga_type of its rows: its stable
// identity, also the name of its consumer).
func New[S any](sagaType string, opts ...Option) *Saga[S] {
	o := options{codec: JSON{}}
	for _, f := range opts {
		f(&o)
	}
	s := &Saga[S]{typ: sagaType, table: o.table, codec: o.codec, routes: map[string]route[S]{},
		deadlines: map[string]func(*scope, []byte, Codec, *S) error{}}
	s.init = func(string) S { var z S; return z }
	if o.init != nil {
		fn, ok := o.init.(func(string) S)
		if !ok {
			s.fail("WithInit takes a func(string) %s", reflect.TypeFor[S]())
		} else {
			s.init = fn
		}
	}
	if sagaType == "" || len(sagaType) > 255 || log.CheckKey(sagaType).Fault != log.KeyOK {
		s.fail("the saga type must be 1 to 255 characters of valid UTF-8")
	}
	return s
}

func (s *Saga[S]) fail(format string, args ...any) {
	s.errs = append(s.errs, &DeclarationError{SagaType: s.typ, What: fmt.Sprintf(format, args...)})
}

// Type is the saga type.
func (s *Saga[S]) Type() string { return s.typ }

// Check reports the declaration's errors (nil when it is sound).
func (s *Saga[S]) Check() error {
	errs := append([]error(nil), s.errs...)
	starts := false
	for _, r := range s.routes {
		starts = starts || r.starts
	}
	if !starts {
		errs = append(errs, &DeclarationError{SagaType: s.typ, What: "no start handler: declare one with StartOn or StartOnType"})
	}
	return errors.Join(errs...)
}

// StartOn registers fn for events of type E (stored under E's Go type
// name): the instance whose saga id is id(event) is created when it does
// not exist yet (from the init state), then fn runs on it.
func StartOn[E, S any](s *Saga[S], id func(E) string, fn func(ctx Context, e E, st *S) error) {
	addRoute(s, reflect.TypeFor[E]().Name(), true, func(ev Event[E]) string { return id(ev.Value) },
		func(ctx Context, ev Event[E], st *S) error { return fn(ctx, ev.Value, st) })
}

// On registers fn for events of type E that correlate to an existing
// instance by id(event); an event whose instance does not exist (or has
// completed) is passed over.
func On[E, S any](s *Saga[S], id func(E) string, fn func(ctx Context, e E, st *S) error) {
	addRoute(s, reflect.TypeFor[E]().Name(), false, func(ev Event[E]) string { return id(ev.Value) },
		func(ctx Context, ev Event[E], st *S) error { return fn(ctx, ev.Value, st) })
}

// StartOnType is StartOn for stored events of eventType, with the stored
// event at hand.
func StartOnType[E, S any](s *Saga[S], eventType string, id func(Event[E]) string, fn func(ctx Context, e Event[E], st *S) error) {
	addRoute(s, eventType, true, id, fn)
}

// OnType is On for stored events of eventType.
func OnType[E, S any](s *Saga[S], eventType string, id func(Event[E]) string, fn func(ctx Context, e Event[E], st *S) error) {
	addRoute(s, eventType, false, id, fn)
}

func addRoute[E, S any](s *Saga[S], eventType string, starts bool, id func(Event[E]) string, fn func(Context, Event[E], *S) error) {
	if eventType == "" || id == nil || fn == nil {
		s.fail("a handler needs an event type name, a saga id function and a function")
		return
	}
	if _, dup := s.routes[eventType]; dup {
		s.fail("two handlers for event type %q", eventType)
		return
	}
	s.routes[eventType] = route[S]{starts: starts, decode: func(rec eventstore.Recorded, codec Codec) (string, applyFn[S], error) {
		var ev Event[E]
		if err := codec.Unmarshal(rec.Payload, &ev.Value); err != nil {
			return "", nil, &PayloadError{SagaType: s.typ, EventType: rec.Type, EventID: rec.ID, Err: err}
		}
		ev.Recorded = rec
		sagaID := id(ev)
		return sagaID, func(sc *scope, st *S) error { return fn(sc.handlerCtx(), ev, st) }, nil
	}}
}

// OnDeadline registers fn for the saga's deadlines named name, their
// payload decoded into P.
func OnDeadline[P, S any](s *Saga[S], name string, fn func(ctx Context, payload P, st *S) error) {
	if name == "" || fn == nil {
		s.fail("a deadline handler needs a name and a function")
		return
	}
	if _, dup := s.deadlines[name]; dup {
		s.fail("two handlers for deadline %q", name)
		return
	}
	s.deadlines[name] = func(sc *scope, payload []byte, codec Codec, st *S) error {
		var p P
		if payload != nil {
			if err := codec.Unmarshal(payload, &p); err != nil {
				return fmt.Errorf("saga %q: deadline %q payload does not decode: %w", s.typ, name, err)
			}
		}
		return fn(sc.handlerCtx(), p, st)
	}
}

// PayloadError reports an event payload its handler's type cannot hold.
type PayloadError struct {
	SagaType, EventType, EventID string
	Err                          error
}

func (e *PayloadError) Error() string {
	return fmt.Sprintf("saga %q: event %s (%s) does not decode: %v", e.SagaType, e.EventID, e.EventType, e.Err)
}

// Unwrap returns the codec's error.
func (e *PayloadError) Unwrap() error { return e.Err }
