// Package projection builds read models from events: a Projection declares
// a read model type S, how a new one starts (init) and the listener of each
// event type; a Store binds it to an engine, applies events as a durable
// consumer (the read model, its read-model topic message and the checkpoint
// commit in one transaction) and answers reads and finders over its query
// table.
//
// A read model's state is its latest message on the projection's read-model
// topic (READ_MODEL_CAPTURE_RECORDS); the projection's query table holds one
// row per read model: its key, that message's id and a copy of each query
// field. A load joins the two; a save publishes the new state and points the
// row at it, conditioned on the id it read, so a save of a read model that
// changed since it was read conflicts and the apply is retried.
package projection

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// Scope says which read model an event updates.
type Scope int

const (
	// Aggregate: one read model per aggregate id (the event's).
	Aggregate Scope = iota
	// Global: one read model for the whole projection, keyed by its name.
	Global
)

func (s Scope) String() string {
	if s == Global {
		return "GLOBAL"
	}
	return "AGGREGATE"
}

// Delete, returned by a listener, deletes the read model: its query-table
// row goes and a tombstone carrying its last state is published.
var Delete = errors.New("projection: delete the read model")

// ErrInvalidDeclaration is wrapped by DeclarationError.
var ErrInvalidDeclaration = errors.New("invalid projection declaration")

// DeclarationError reports a declaration the store refuses before any SQL
// runs: what is wrong and with which part.
type DeclarationError struct {
	Projection string
	What       string
}

func (e *DeclarationError) Error() string {
	return fmt.Sprintf("projection %q: %s", e.Projection, e.What)
}

// Unwrap makes errors.Is(err, ErrInvalidDeclaration) hold.
func (e *DeclarationError) Unwrap() error { return ErrInvalidDeclaration }

// Event is an event as a listener declared with OnType gets it: its payload
// decoded into E and the stored event.
type Event[E any] struct {
	Value    E
	Recorded eventstore.Recorded
}

// listener applies one stored event to a read model.
type listener[S any] func(rec eventstore.Recorded, codec Codec, s *S) error

// Projection declares a read model S: its name (the stable identity: the
// consumer's name, the read-model topic, the query table's default name),
// its scope, how a new read model starts and the listener per event type.
// Declare it once at startup; it is not safe to change while a Store uses it.
type Projection[S any] struct {
	name      string
	scope     Scope
	table     string
	typeName  string
	codec     Codec
	init      func(key string) S
	listeners map[string]listener[S]
	upstream  map[string]upstreamListener[S]
	fields    []field[S]
	convs     *Converters
	errs      []error

	// resolving guards the fields' conversions, which Check resolves once
	// (a store may be opened from several goroutines; an apply reads them).
	resolving sync.Mutex
}

// Option sets a projection's optional attributes.
type Option func(*options)

type options struct {
	scope    Scope
	table    string
	typeName string
	codec    Codec
	convs    *Converters
}

// WithScope sets the scope (default Aggregate).
func WithScope(s Scope) Option { return func(o *options) { o.scope = s } }

// WithTable names the query table (default: the name with the cqrs area's
// prefix, every character other than a letter, digit or _ made _).
func WithTable(table string) Option { return func(o *options) { o.table = table } }

// WithTypeName sets read_model_type of its topic's messages (default: S's
// Go type name).
func WithTypeName(name string) Option { return func(o *options) { o.typeName = name } }

// WithCodec sets how read models and event payloads are (de)serialised
// (default JSON, encoding/json).
func WithCodec(c Codec) Option { return func(o *options) { o.codec = c } }

// WithConverters sets the converters that reduce query-field values of
// other Go types to a column's kind.
func WithConverters(c *Converters) Option { return func(o *options) { o.convs = c } }

// New declares a projection. init returns a new read model for a key (the
// aggregate id, or the projection's name for Global scope); nil init starts
// from S's zero value.
func New[S any](name string, init func(key string) S, opts ...Option) *Projection[S] {
	o := options{codec: JSON{}}
	for _, f := range opts {
		f(&o)
	}
	if o.typeName == "" {
		o.typeName = reflect.TypeFor[S]().Name()
	}
	if init == nil {
		init = func(string) S { var s S; return s }
	}
	if o.convs == nil {
		o.convs = NewConverters()
	}
	p := &Projection[S]{name: name, scope: o.scope, table: o.table, typeName: o.typeName, codec: o.codec,
		init: init, listeners: map[string]listener[S]{}, upstream: map[string]upstreamListener[S]{}, convs: o.convs}
	if name == "" || log.CheckKey(name).Fault != log.KeyOK {
		p.fail("the name must be 1 to %d characters of valid UTF-8", log.MaxKeyLength)
	}
	if o.typeName == "" || len(o.typeName) > log.MaxKeyLength {
		p.fail("the read model's type name must be 1 to %d characters (WithTypeName)", log.MaxKeyLength)
	}
	return p
}

func (p *Projection[S]) fail(format string, args ...any) {
	p.errs = append(p.errs, &DeclarationError{Projection: p.name, What: fmt.Sprintf(format, args...)})
}

// Name is the projection's name.
func (p *Projection[S]) Name() string { return p.name }

// Scope is the projection's scope.
func (p *Projection[S]) Scope() Scope { return p.scope }

// EventTypes are the event types it listens to, sorted.
func (p *Projection[S]) EventTypes() []string {
	out := make([]string, 0, len(p.listeners))
	for t := range p.listeners {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// On registers fn for events of type E, whose stored event type is E's Go
// type name; use OnType for another name or to see the stored event.
func On[E, S any](p *Projection[S], fn func(E, *S) error) {
	OnType(p, reflect.TypeFor[E]().Name(), func(ev Event[E], s *S) error { return fn(ev.Value, s) })
}

// OnType registers fn for stored events of eventType, their payload
// decoded into E.
func OnType[E, S any](p *Projection[S], eventType string, fn func(Event[E], *S) error) {
	if eventType == "" {
		p.fail("a listener needs an event type name")
		return
	}
	if _, dup := p.listeners[eventType]; dup {
		p.fail("two listeners for event type %q", eventType)
		return
	}
	p.listeners[eventType] = func(rec eventstore.Recorded, codec Codec, s *S) error {
		var ev Event[E]
		if err := codec.Unmarshal(rec.Payload, &ev.Value); err != nil {
			return &PayloadError{Projection: p.name, EventType: rec.Type, EventID: rec.ID, Err: err}
		}
		ev.Recorded = rec
		return fn(ev, s)
	}
}

// QueryTable is the projection's query table as the engine creates and
// checks it (engine.Config.QueryTables).
func (p *Projection[S]) QueryTable() schema.QueryTable {
	q := schema.QueryTable{Projection: p.name, Table: p.table}
	for _, f := range p.fields {
		q.Fields = append(q.Fields, f.decl)
	}
	return q
}

// Check reports the declaration's errors (nil when it is sound); a Store
// refuses to open on them before any SQL runs.
func (p *Projection[S]) Check() error {
	errs := append([]error(nil), p.errs...)
	for _, t := range p.convs.duplicates() {
		errs = append(errs, &DeclarationError{Projection: p.name, What: fmt.Sprintf("two converters for %s (projection.Convert): one per type", t)})
	}
	if len(p.listeners) == 0 && len(p.upstream) == 0 {
		errs = append(errs, &DeclarationError{Projection: p.name, What: "no listener: declare one with On, OnType or OnReadModel"})
	}
	p.resolving.Lock()
	defer p.resolving.Unlock()
	for i := range p.fields {
		if p.fields[i].conv != nil {
			continue // resolved by an earlier Check: never written again, since applies read it
		}
		if err := p.fields[i].resolve(p.convs); err != nil {
			errs = append(errs, &DeclarationError{Projection: p.name, What: err.Error()})
		}
	}
	return errors.Join(errs...)
}

// key is the read model a message of key (an aggregate id, an upstream
// read model's key) updates.
func (p *Projection[S]) key(key string) string {
	if p.scope == Global {
		return p.name
	}
	return key
}

// PayloadError reports an event payload its listener's type cannot hold.
type PayloadError struct {
	Projection, EventType, EventID string
	Err                            error
}

func (e *PayloadError) Error() string {
	return fmt.Sprintf("projection %q: event %s (%s) does not decode: %v", e.Projection, e.EventID, e.EventType, e.Err)
}

// Unwrap returns the codec's error.
func (e *PayloadError) Unwrap() error { return e.Err }
