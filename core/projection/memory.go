package projection

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// ErrRunning is returned by a Memory's Run while another Run of it runs.
var ErrRunning = errors.New("projection: the in-memory projection already runs")

// Memory is a projection whose read models live only in this process's
// memory: Run builds them from the whole event store and keeps them
// current; nothing is read from or written to the projection's tables
// (no consumer row, no checkpoint, no query-table row, no read-model
// topic message). Every process builds its own; a restart builds again
// from the first event. Each event is applied once per Memory, in global
// position order, with the listeners and codec a Store applies with.
//
// Reads (Get, All, Len, Position, Sync) are safe while Run applies; each
// returns a copy decoded from the read model's encoded state.
type Memory[S any] struct {
	p     *Projection[S]
	e     *engine.Engine
	store *eventstore.Store
	opts  memoryOptions

	mu      sync.RWMutex
	models  map[string][]byte // key → the codec's encoding of its state
	pos     int64             // every event at or below it is applied
	moved   chan struct{}     // closed (and replaced) when pos moves or Run fails
	failed  error             // the listener or codec error that stopped Run
	running bool
}

// MemoryOption sets an in-memory projection's optional attributes.
type MemoryOption func(*memoryOptions)

type memoryOptions struct {
	waker eventstore.Waker
	poll  time.Duration
}

// WithWaker wakes the Memory's follower as soon as a local advancer moves
// the event store's mark (a *hwm.Advancer, a *pgwake.Waker); without one
// it polls every WithPollInterval.
func WithWaker(w eventstore.Waker) MemoryOption { return func(o *memoryOptions) { o.waker = w } }

// WithPollInterval sets how often the follower reads the mark when no
// waker wakes it (eventstore.FollowOptions.PollInterval; default 100ms).
func WithPollInterval(d time.Duration) MemoryOption { return func(o *memoryOptions) { o.poll = d } }

// OpenMemory binds p to e as an in-memory projection. The declaration is
// checked as Open checks it, and what memory cannot hold is refused with
// a *DeclarationError: a listener on another projection's read models
// (OnReadModel), whose source is a stored read-model topic. Query fields
// may be declared (one declaration serves a Store and a Memory) and are
// not used: a Memory has no query table and needs none declared at e's
// Open. OpenMemory runs no SQL.
func OpenMemory[S any](ctx context.Context, e *engine.Engine, p *Projection[S], opts ...MemoryOption) (*Memory[S], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(p.upstream) > 0 {
		return nil, &DeclarationError{Projection: p.name, What: "an in-memory projection cannot listen to read models (OnReadModel): declare it on events only"}
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	var o memoryOptions
	for _, f := range opts {
		f(&o)
	}
	return &Memory[S]{p: p, e: e, store: eventstore.New(e, nil), opts: o,
		models: map[string][]byte{}, moved: make(chan struct{})}, nil
}

// Projection is the Memory's declaration.
func (m *Memory[S]) Projection() *Projection[S] { return m.p }

// Run follows the event store from where the Memory stands (the start,
// on its first Run) and applies each event's listener to its read model,
// as the event store's high-water mark passes it; a listener returning
// Delete removes the read model. It returns ctx's error when ctx ends; a
// listener's (or the codec's) error stops it, wrapped with the event's
// position and id, and every later Sync returns it. The event is then not
// applied: a later Run applies it again. Only one Run runs at a time
// (ErrRunning).
func (m *Memory[S]) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return ErrRunning
	}
	m.running, m.failed = true, nil
	after := m.pos
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()
	fo := eventstore.FollowOptions{Waker: m.opts.waker, PollInterval: m.opts.poll, Passed: m.passed}
	err := m.store.Follow(ctx, after, fo, m.applyEvent)
	var ae *ApplyError
	if errors.As(err, &ae) {
		m.fail(err)
	}
	return err
}

// ApplyError is the error that stopped a Memory's Run: the apply of the
// event at Position (its listener's error, or the codec's) failed.
type ApplyError struct {
	Projection string
	Position   int64
	EventID    string
	Err        error
}

func (e *ApplyError) Error() string {
	return fmt.Sprintf("projection %q: in-memory apply of event %s at position %d: %v", e.Projection, e.EventID, e.Position, e.Err)
}

// Unwrap returns the listener's or the codec's error.
func (e *ApplyError) Unwrap() error { return e.Err }

// applyEvent applies one event: its listener's run on its read model's
// state (or a new one from init), the result encoded and kept, or the
// read model removed on Delete. An event no listener is declared for only
// moves the position.
func (m *Memory[S]) applyEvent(rec eventstore.Recorded) error {
	key, run, ok := m.p.eventListener(rec)
	if !ok {
		m.passed(rec.GlobalPosition)
		return nil
	}
	m.mu.RLock()
	stored, found := m.models[key]
	m.mu.RUnlock() // only Run writes models: nothing changes it meanwhile
	wrap := func(err error) error {
		return &ApplyError{Projection: m.p.name, Position: rec.GlobalPosition, EventID: rec.ID, Err: err}
	}
	state := m.p.init(key)
	if found {
		var err error
		if state, err = m.p.decodeState(key, stored); err != nil {
			return wrap(err)
		}
	}
	deleted, err := runOn(run, &state)
	if err != nil {
		return wrap(err)
	}
	var payload []byte
	if !deleted {
		if payload, err = m.p.codec.Marshal(state); err != nil {
			return wrap(fmt.Errorf("read model %q does not encode: %w", key, err))
		}
	}
	m.mu.Lock()
	if deleted {
		delete(m.models, key)
	} else {
		m.models[key] = payload
	}
	m.mu.Unlock()
	m.passed(rec.GlobalPosition)
	return nil
}

// passed records that every event at or below position is applied and
// wakes the Syncs waiting.
func (m *Memory[S]) passed(position int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if position <= m.pos {
		return
	}
	m.pos = position
	close(m.moved)
	m.moved = make(chan struct{})
}

// fail records the error that stopped Run and wakes the Syncs waiting.
func (m *Memory[S]) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failed = err
	close(m.moved)
	m.moved = make(chan struct{})
}
