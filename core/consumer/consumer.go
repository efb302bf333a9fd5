// Package consumer runs durable consumers: a consumer (type, name) reads
// one or more sources (the event store; the capture topic plugs in through
// Source), keeps a forward-only checkpoint per source and partition in
// CONSUMER_CHECKPOINTS, and carries its state (running, PAUSED, HALTED,
// REBUILDING), halt reason, epoch and state_since on its CONSUMERS row.
//
// Delivery is at least once: a consumer resumes after its checkpoint, so a
// message applied but not yet covered by a saved checkpoint is applied
// again after a restart. A Transactional handler writes in the checkpoint's
// own transaction, so an apply that committed with its checkpoint is never
// applied again (see docs/consumers.md for the idempotence rules).
package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// State is a consumer's state as CONSUMERS.state spells it; Running is
// stored as NULL.
type State string

// States.
const (
	Running    State = "RUNNING" // state NULL
	Paused     State = "PAUSED"  // by an operator
	Halted     State = "HALTED"  // by the framework, with a HaltReason
	Rebuilding State = "REBUILDING"
)

// HaltReason is why a consumer is HALTED (CONSUMERS.halt_reason).
type HaltReason string

// Halt reasons of the spec.
const (
	MissingHistory     HaltReason = "MISSING_HISTORY"
	ApplyError         HaltReason = "APPLY_ERROR"
	DeclarationChanged HaltReason = "DECLARATION_CHANGED"
)

// Consumer is a consumer's row.
type Consumer struct {
	ID         string
	Type       string
	Name       string
	State      State
	HaltReason HaltReason // "" unless Halted
	// Epoch is how often the consumer was rebuilt; 0 while the column is
	// NULL (never rebuilt).
	Epoch int64
	// StateSince is when it entered its state, by the application's clock.
	StateSince time.Time
}

// SourceRef names a source and its partition count, what a subscription
// creates checkpoints for.
type SourceRef struct {
	Name       string
	Partitions int
}

// Registry reads and writes consumer rows and checkpoints.
type Registry struct {
	e   *engine.Engine
	now func() time.Time
	// replays caches, by consumer id, whether its epoch as last read is a
	// replay's (polls).
	replays sync.Map
}

// NewRegistry returns a registry on e. now is the application clock that
// stamps state_since (time.Now when nil); tests inject their own.
func NewRegistry(e *engine.Engine, now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{e: e, now: now}
}

// Engine returns the engine the registry runs on.
func (r *Registry) Engine() *engine.Engine { return r.e }

func (r *Registry) stamp() time.Time { return r.now().UTC() }

// checkNames refuses, before any SQL, names the columns cannot store or
// the engine would merge (see checkName).
func (r *Registry) checkNames(typ, name string, sources []SourceRef) error {
	pad, eng := r.e.Cat.KeysIgnoreTrailingSpaces, r.e.Cat.Identity.Name
	if err := checkName("consumer type", typ, MaxTypeLength, pad, eng); err != nil {
		return err
	}
	if err := checkName("consumer name", name, MaxNameLength, pad, eng); err != nil {
		return err
	}
	for _, s := range sources {
		if err := checkName("source name", s.Name, MaxSourceLength, pad, eng); err != nil {
			return err
		}
		if s.Partitions < 1 || s.Partitions > 32767 { // partition_no is a SMALLINT
			return &InvalidNameError{Field: "source partitions", Value: s.Name, Reason: fmt.Sprintf("has %d partitions, want 1..32767", s.Partitions)}
		}
	}
	return checkSourceNames(sources)
}

// Subscribe creates the consumer's row (running, state_since now) unless
// it exists, and a checkpoint with no position for every partition of
// every source it lacks one for. It returns the row. Names the database
// does not tell apart from an existing consumer's are refused with
// *NameCollisionError; names refused before any SQL get *InvalidNameError.
func (r *Registry) Subscribe(ctx context.Context, typ, name string, sources ...SourceRef) (Consumer, error) {
	if err := r.checkNames(typ, name, sources); err != nil {
		return Consumer{}, err
	}
	c, err := r.ensureRow(ctx, typ, name)
	if err != nil {
		return Consumer{}, err
	}
	epoch := epochBind(c.Epoch)
	for _, s := range sources {
		for p := range s.Partitions {
			if err := r.insertIgnoringDuplicate(ctx, func() error {
				_, err := stmt.ExecCheckpointInsert(ctx, r.e, r.e.DB, stmt.CheckpointInsertParams{
					ConsumerID: c.ID, SourceName: s.Name, PartitionNo: p, Epoch: epoch})
				return err
			}); err != nil {
				return Consumer{}, fmt.Errorf("consumer %s/%s: checkpoint %s/%d: %w", typ, name, s.Name, p, err)
			}
		}
	}
	return c, nil
}

func (r *Registry) ensureRow(ctx context.Context, typ, name string) (Consumer, error) {
	if c, err := r.Lookup(ctx, typ, name); err == nil {
		return c, nil
	} else if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNameCollision) {
		return Consumer{}, err
	}
	if err := r.insertIgnoringDuplicate(ctx, func() error {
		_, err := stmt.ExecConsumerInsert(ctx, r.e, r.e.DB, stmt.ConsumerInsertParams{
			ID: uuid.NewString(), ConsumerType: typ, ConsumerName: name, StateSince: r.stamp()})
		return err
	}); err != nil {
		return Consumer{}, fmt.Errorf("consumer %s/%s: %w", typ, name, err)
	}
	// Whoever inserted it (this call or a concurrent subscribe), the row the
	// database holds for these names is read back and compared exactly.
	return r.Lookup(ctx, typ, name)
}

// epochBind is an epoch as its bind: NULL for a consumer never rebuilt.
func epochBind(epoch int64) *int64 {
	if epoch > 0 {
		return &epoch
	}
	return nil
}

// insertIgnoringDuplicate runs insert, whose unique violation means the
// row exists; transient errors are retried.
func (r *Registry) insertIgnoringDuplicate(ctx context.Context, insert func() error) error {
	return r.retryTransient(ctx, func() error {
		err := insert()
		// A primary-key violation is classed as a duplicate event id on
		// engines that tell the event table's key apart only by its kind
		// (SQLite's 1555); here either means the row exists.
		switch r.e.Errors.Classify(err) {
		case dialect.ErrUniqueViolation, dialect.ErrDuplicateEventID:
			return nil
		}
		return err
	})
}

// Lookup returns the consumer (typ, name). A row the database returns for
// these names whose names differ (a collation ignoring case, accents or
// trailing spaces) is a *NameCollisionError.
func (r *Registry) Lookup(ctx context.Context, typ, name string) (Consumer, error) {
	row, err := stmt.QueryRowConsumerByName(ctx, r.e, r.e.DB, stmt.ConsumerByNameParams{ConsumerType: typ, ConsumerName: name})
	c, err := consumerOf(row, err)
	if err != nil {
		return Consumer{}, err
	}
	if c.Type != typ || c.Name != name {
		return Consumer{}, &NameCollisionError{Type: typ, Name: name, ExistingType: c.Type, ExistingName: c.Name}
	}
	return c, nil
}

// Get returns the consumer with id.
func (r *Registry) Get(ctx context.Context, id string) (Consumer, error) {
	return r.get(ctx, r.e.DB, id)
}

func (r *Registry) get(ctx context.Context, q engine.Querier, id string) (Consumer, error) {
	return consumerOf(stmt.QueryRowConsumerByID(ctx, r.e, q, stmt.ConsumerByIDParams{ID: id}))
}

// scanRow scans a consumer row (the columns of dialect.ConsumerByID) for
// the operator's list, which is not yet typed.
func (r *Registry) scanRow(row engine.Row) (Consumer, error) {
	var c stmt.ConsumerByIDRow
	err := row.Scan(&c.ID, &c.ConsumerType, &c.ConsumerName, &c.State, &c.HaltReason, &c.Epoch, &c.StateSince)
	return consumerOf(c, err)
}

// consumerOf is the consumer a consumer row holds; sql.ErrNoRows is
// ErrNotFound.
func consumerOf(row stmt.ConsumerByIDRow, err error) (Consumer, error) {
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Consumer{}, ErrNotFound
		}
		return Consumer{}, err
	}
	c := Consumer{ID: row.ID, Type: row.ConsumerType, Name: row.ConsumerName, State: Running,
		HaltReason: HaltReason(row.HaltReason.String), Epoch: row.Epoch.Int64, StateSince: time.Time(row.StateSince)}
	if row.State.Valid {
		c.State = State(row.State.String)
	}
	return c, nil
}
