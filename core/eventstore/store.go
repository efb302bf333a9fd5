package eventstore

import (
	"errors"
	"reflect"
	"sync"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
)

type queryer = engine.Querier

// Nudger is told after every commit of an append made through the store,
// so a local high-water-mark advancer can move at once instead of waiting
// for its next poll.
type Nudger interface{ Nudge() }

// CommittedNudger is a Nudger that also takes the highest position of the
// append that committed (hwm.Advancer: on a counter row its next cycle
// then publishes that end without reading the counter).
type CommittedNudger interface {
	Nudger
	NudgeCommitted(end int64)
}

// Store is the event store of one engine.
type Store struct {
	e         *engine.Engine
	nudger    Nudger
	events    *engine.Insert  // the event insert
	positions position.Writer // the position strategy's write side
	plan      plan            // the fast paths an append may take
	counterMu sync.Mutex      // queues this process's appends for the counter row
	txFault   func()          // tests only: runs in a lone append's transaction before the commit
	retry     Retry           // how Append retries transient errors
	group     *groupCommit    // queued appends; nil when group commit is off
	known     *knownVersions  // versions this store's appends committed
}

// New returns the event store of e. nudger may be nil. Options: WithRetry,
// WithGroupCommit.
//
// A store remembers the versions its appends committed (the streams it
// appended to last) and, where the insert would check an exact version,
// binds the sequence numbers of an append that expects one of them: it
// relies on streams never losing events. After the database is restored
// or failed over to a point before events it had committed, make new
// stores (restart the writers).
func New(e *engine.Engine, nudger Nudger, opts ...Option) *Store {
	s := &Store{e: e, nudger: normaliseNudger(nudger), events: e.NewInsert("event insert", e.Cat.EventInsert, rowParams), retry: DefaultRetry,
		positions: position.Of(e).Writer(engine.EventStorePositions), group: &groupCommit{},
		known: newKnownVersions(defaultKnownStreams)}
	s.plan = newPlan(e.Cat.EventInsert, s.events, s.positions)
	for _, o := range opts {
		o(s)
	}
	return s
}

// normaliseNudger turns a nil pointer passed as the interface (a caller's
// nil *hwm.Advancer) into no nudger: such a value is not a nil interface,
// and the first append's nudge would panic on it.
func normaliseNudger(n Nudger) Nudger {
	if v := reflect.ValueOf(n); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return n
}

// Engine returns the store's engine.
func (s *Store) Engine() *engine.Engine { return s.e }

func (s *Store) nudge() {
	if s.nudger != nil {
		s.nudger.Nudge()
	}
}

// nudgeCommitted nudges after res committed, with the committed end the
// strategy lets it report where the nudger takes it.
func (s *Store) nudgeCommitted(res Appended) {
	if c, ok := s.nudger.(CommittedNudger); ok {
		if end, committed := s.positions.Committed(res.Positions); committed {
			c.NudgeCommitted(end)
			return
		}
	}
	s.nudge()
}

// eventTable is the table of an aggregate type: its own when declared, else
// the shared event table.
func (s *Store) eventTable(aggregateType string) string {
	if t, ok := s.e.Names.ByAggregate[aggregateType]; ok {
		return t.Events
	}
	return s.e.Names.Shared["event_store_table"]
}

func (s *Store) snapshotTable(aggregateType string) string {
	if t, ok := s.e.Names.ByAggregate[aggregateType]; ok {
		return t.Snapshots
	}
	return s.e.Names.Shared["aggregate_snapshots_table"]
}

// dbErr classifies an error that came from the database, so callers can
// branch with errors.Is(err, sqlerr.ErrDeadlock) (and the other classes) or
// sqlerr.IsTransient while errors.As still reaches the driver's error. The
// store's own typed errors are returned as they are: they carry no driver
// error, and a dialect's message rule must never re-class them.
func (s *Store) dbErr(err error) error {
	if err == nil || errors.Is(err, ErrConcurrency) || errors.Is(err, ErrDuplicateEvent) ||
		errors.Is(err, ErrInvalidEvent) || errors.Is(err, ErrAggregateIDTaken) {
		return err
	}
	return s.e.Errors.Wrap(err)
}
