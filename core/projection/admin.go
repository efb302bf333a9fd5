package projection

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// ErrNoShadow: a rebuild by name of a projection whose shadow table does
// not exist (no Store of this version opened it on a writable engine).
var ErrNoShadow = errors.New("projection: no shadow table")

// Status is a projection's rebuild and declaration state as an operator
// reads it, without its declaration at hand.
type Status struct {
	Consumer consumer.ConsumerStatus `json:"consumer"`
	// Fingerprint is the stored declaration fingerprint's current four
	// ("" when none, or accepted until the next start stores it); Previous
	// the four after ";".
	Fingerprint string          `json:"fingerprint"`
	Previous    string          `json:"previous_fingerprint,omitempty"`
	Replay      consumer.Replay `json:"replay"`
}

// CheckName refuses, before any SQL, a name no projection can have (a
// *consumer.InvalidNameError).
func CheckName(name string) error {
	if name == "" || log.CheckKey(name).Fault != log.KeyOK {
		return &consumer.InvalidNameError{Field: "projection", Value: name,
			Reason: fmt.Sprintf("a projection's name is 1 to %d characters of valid UTF-8", log.MaxKeyLength)}
	}
	return nil
}

func refOf(name string) consumer.Ref { return consumer.Ref{Type: ConsumerType, Name: name} }

// StatusOf reads projection name's status: its consumer's, its
// fingerprints and its rebuild's replay. It only reads.
func StatusOf(ctx context.Context, op *consumer.Operator, name string) (Status, error) {
	if err := CheckName(name); err != nil {
		return Status{}, err
	}
	cs, err := op.Status(ctx, refOf(name))
	if err != nil {
		return Status{}, err
	}
	e := op.Engine()
	reg := consumer.NewRegistry(e, nil)
	fp, err := reg.Fingerprint(ctx, e.DB, cs.ID)
	if err != nil {
		return Status{}, err
	}
	st := Status{Consumer: cs}
	st.Fingerprint, st.Previous = splitFingerprint(fp)
	if st.Replay, err = reg.ReplayOf(ctx, e.DB, cs.ID); err != nil {
		return Status{}, err
	}
	return st, nil
}

// BeginRebuildByName begins projection name's rebuild without its
// declaration (an operator's): as Store.BeginRebuild, on the shadow of its
// query table (table: "" for the default name under cqrsPrefix), which a
// Store of the projection created when it opened. The projection's runners
// replay and switch once caught up (Options), storing their declaration's
// fingerprint. It returns the replay's epoch and each source's
// replay_through.
func BeginRebuildByName(ctx context.Context, e *engine.Engine, name, table, cqrsPrefix string) (consumer.Replay, error) {
	if err := CheckName(name); err != nil {
		return consumer.Replay{}, err
	}
	table, err := schema.ResolveQueryTable(schema.QueryTable{Projection: name, Table: table}, cqrsPrefix)
	if err != nil {
		return consumer.Replay{}, err
	}
	shadow, err := shadowName(e.Cat, table)
	if err != nil {
		return consumer.Replay{}, err
	}
	if e.ReadOnly() {
		return consumer.Replay{}, fmt.Errorf("projection %q: rebuild: %w", name, ErrReadOnly)
	}
	reg := consumer.NewRegistry(e, nil)
	c, err := reg.Lookup(ctx, ConsumerType, name)
	if err != nil {
		return consumer.Replay{}, fmt.Errorf("projection %q: %w", name, err)
	}
	if ok, err := schema.TableExists(ctx, e.DB, e.Cat, shadow); err != nil || !ok {
		return consumer.Replay{}, errors.Join(err, fmt.Errorf("projection %q: shadow table %s of query table %s: %w (open the projection's store once with this version, or pass its table)", name, shadow, table, ErrNoShadow))
	}
	clear, err := e.CompileText(`DELETE FROM ${shadow_table}`, map[string]string{"shadow_table": shadow})
	if err != nil {
		return consumer.Replay{}, err
	}
	through, err := replayThrough(ctx, e, reg, c.ID)
	if err != nil {
		return consumer.Replay{}, fmt.Errorf("projection %q: rebuild: %w", name, err)
	}
	epoch, err := reg.BeginReplay(ctx, c.ID, through, func(ctx context.Context, tx *sql.Tx, _ int64) error {
		_, err := e.ExecCompiled(ctx, tx, clear, nil)
		return err
	})
	if err != nil {
		return consumer.Replay{}, err
	}
	return consumer.Replay{Epoch: epoch, Replaying: true, Through: through}, nil
}

// AcceptByName accepts projection name's current declaration without it
// at hand (an operator's): the stored fingerprint's four move after ";"
// with the current part left empty, which the next start of the projection
// fills with its own, and a consumer halted with DECLARATION_CHANGED runs
// again.
func AcceptByName(ctx context.Context, e *engine.Engine, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if e.ReadOnly() {
		return fmt.Errorf("projection %q: accept: %w", name, ErrReadOnly)
	}
	reg := consumer.NewRegistry(e, nil)
	c, err := reg.Lookup(ctx, ConsumerType, name)
	if err != nil {
		return fmt.Errorf("projection %q: %w", name, err)
	}
	stored, err := reg.Fingerprint(ctx, e.DB, c.ID)
	if err != nil {
		return err
	}
	cur, prev := splitFingerprint(stored)
	if cur != "" {
		prev = cur
	}
	return reg.AcceptDeclaration(ctx, c.ID, ";"+prev)
}
