package projection

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// openRebuild prepares the store's rebuild: the shadow table's name and
// statements, and the consumer's row (created with the declaration's
// fingerprint on a writable engine) and shadow table.
func (s *Store[S]) openRebuild(ctx context.Context) error {
	var err error
	if s.shadow, err = shadowName(s.e.Cat, s.table); err != nil {
		return fmt.Errorf("projection %q: %w", s.p.name, err)
	}
	if s.shadowStmts, err = compileStatements(s.e, s.shadow, s.p.fields); err != nil {
		return err
	}
	if s.swap, err = compileSwitch(s.e, s.table, s.shadow, s.p.fields); err != nil {
		return err
	}
	s.reg, s.modes = consumer.NewRegistry(s.e, nil), map[int64]bool{}
	c, err := s.reg.Lookup(ctx, ConsumerType, s.p.name)
	switch {
	case errors.Is(err, consumer.ErrNotFound) && s.e.ReadOnly():
		return nil
	case errors.Is(err, consumer.ErrNotFound):
		if c, err = s.reg.Subscribe(ctx, ConsumerType, s.p.name); err != nil {
			return fmt.Errorf("projection %q: creating its consumer: %w", s.p.name, err)
		}
	case err != nil:
		return fmt.Errorf("projection %q: reading its consumer: %w", s.p.name, err)
	}
	s.consumerID = c.ID
	if !s.e.CreatesIn(dialect.AreaCQRS) {
		return nil // the application's DDL has the shadow (BeginRebuild checks)
	}
	return s.ensureShadow(ctx)
}

// checkFingerprint compares the declaration's fingerprint with the one
// stored with the consumer (see Open): stored when there is none (or an
// operator accepted a change without the declaration at hand: the current
// four empty), refused with the DECLARATION_CHANGED halt when it differs.
func (s *Store[S]) checkFingerprint(ctx context.Context) error {
	if s.consumerID == "" {
		return nil
	}
	stored, err := s.reg.Fingerprint(ctx, s.e.DB, s.consumerID)
	if err != nil {
		return fmt.Errorf("projection %q: reading its fingerprint: %w", s.p.name, err)
	}
	declared := s.Fingerprint()
	cur, _ := splitFingerprint(stored)
	switch {
	case cur == declared:
		return nil
	case cur == "":
		if s.e.ReadOnly() {
			return nil
		}
		return s.reg.SetFingerprint(ctx, s.e.DB, s.consumerID, nextFingerprint(stored, declared))
	}
	replaying, err := s.haltChanged(ctx)
	if err != nil || replaying {
		return err
	}
	return &DeclarationChangedError{Projection: s.p.name, Stored: cur, Declared: declared, Parts: changedParts(cur, declared)}
}

// errReplaying rolls back a DECLARATION_CHANGED halt that met a rebuild.
var errReplaying = errors.New("a rebuild replays")

// haltChanged halts the consumer with DECLARATION_CHANGED unless a rebuild
// replays (then the fingerprint is the switch's to store): true when one
// does. The halt's write comes first, so the replay's read after it sees a
// rebuild begun meanwhile (its begin writes the same row), and the halt is
// rolled back then.
func (s *Store[S]) haltChanged(ctx context.Context) (bool, error) {
	if s.e.ReadOnly() {
		rp, err := s.reg.ReplayOf(ctx, s.e.DB, s.consumerID)
		return rp.Replaying, err
	}
	err := s.e.InTx(ctx, engine.OpWrite, engine.DefaultTransientRetry, func(tx *sql.Tx) error {
		if _, err := s.reg.HaltIn(ctx, tx, s.consumerID, consumer.DeclarationChanged); err != nil {
			return fmt.Errorf("projection %q: halting its consumer: %w", s.p.name, err)
		}
		rp, err := s.reg.ReplayOf(ctx, tx, s.consumerID)
		if err != nil {
			return err
		}
		if rp.Replaying {
			return errReplaying
		}
		return nil
	})
	if errors.Is(err, errReplaying) {
		return true, nil
	}
	return false, err
}

// Accept accepts p's declaration as the one its read models were built
// with: its fingerprint is stored (the one it replaces kept after ";") and
// a consumer halted with DECLARATION_CHANGED runs again, without a
// rebuild. Use it when the change does not alter what the read models
// hold; Rebuild otherwise.
func Accept[S any](ctx context.Context, e *engine.Engine, p *Projection[S]) error {
	s, err := open(ctx, e, p)
	if err != nil {
		return err
	}
	if e.ReadOnly() || s.consumerID == "" {
		return fmt.Errorf("projection %q: accept: %w", p.name, ErrReadOnly)
	}
	stored, err := s.reg.Fingerprint(ctx, e.DB, s.consumerID)
	if err != nil {
		return err
	}
	return s.reg.AcceptDeclaration(ctx, s.consumerID, nextFingerprint(stored, s.Fingerprint()))
}

// Rebuild opens p's store whatever its fingerprint (a changed declaration
// is what a rebuild is for) and rebuilds it (Store.Rebuild): a halted
// consumer runs again, replays into the shadow and switches; the new
// fingerprint is stored at the switch. The projection's runners must run
// (Options of a store opened once the rebuild began) for the replay to
// progress; ctx bounds the wait.
func Rebuild[S any](ctx context.Context, e *engine.Engine, p *Projection[S]) error {
	s, err := open(ctx, e, p)
	if err != nil {
		return err
	}
	return s.Rebuild(ctx)
}
