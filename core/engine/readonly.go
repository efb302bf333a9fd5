package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// ErrReadOnly is wrapped by *ReadOnlyError: a write asked of an engine
// opened with Config.ReadOnly.
var ErrReadOnly = errors.New("engine is read-only")

// ReadOnlyError refuses a write (an append, a publish, an advancer's
// cycle, any catalogue statement run with Exec) on an engine opened with
// Config.ReadOnly, before any SQL runs. errors.Is(err, ErrReadOnly) holds,
// and so does errors.Is(err, sqlerr.ErrReadOnly): the same class as a
// write the server itself refused (SQLSTATE 25006).
type ReadOnlyError struct {
	// Op is what was refused, e.g. "begin a transaction to append" or
	// "statement hwm.acquire".
	Op string
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("%s refused: the engine was opened read-only (Config.ReadOnly); write through an engine opened on the primary", e.Op)
}

// Unwrap makes errors.Is(err, ErrReadOnly) and errors.Is(err,
// sqlerr.ErrReadOnly) hold.
func (e *ReadOnlyError) Unwrap() []error { return []error{ErrReadOnly, sqlerr.ErrReadOnly} }

// ErrSchemaMissing is wrapped by *SchemaMissingError.
var ErrSchemaMissing = errors.New("schema not initialised")

// SchemaMissingError is returned by an Open with Config.ReadOnly or
// Config.Existing when the schema, the partition count or the event store's
// mark row is missing: such an engine creates nothing, so it opens only on a
// database an engine opened without them has initialised.
type SchemaMissingError struct {
	// What is missing, e.g. "table EVENT_STORE" or "the partition count in PARTITION_METADATA".
	What string
	// Cause is the error that found it missing (a *schema.MissingTableError
	// for a table), or nil.
	Cause error
}

func (e *SchemaMissingError) Error() string {
	return fmt.Sprintf("verifying open: %s is missing; an engine opened with ReadOnly or Existing creates nothing: create the schema first (an engine opened without them, `tidemark migrate`, or the scripts `tidemark schema` prints)", e.What)
}

// Unwrap makes errors.Is(err, ErrSchemaMissing) hold and keeps the cause.
func (e *SchemaMissingError) Unwrap() []error { return []error{ErrSchemaMissing, e.Cause} }

// ReadOnly reports whether the engine was opened with Config.ReadOnly.
func (e *Engine) ReadOnly() bool { return e.readOnly }

// CreatesIn reports whether the engine may create tables of area after
// Open (a projection's shadow table): not when it is read-only, opened on
// an existing schema (Config.Existing), or the area's mode is Never.
func (e *Engine) CreatesIn(area dialect.Area) bool {
	return !e.readOnly && !e.existing && e.modes[area] != schema.Never
}

// refuse returns a *ReadOnlyError for op on a read-only engine, else nil.
func (e *Engine) refuse(op string) error {
	if e.readOnly {
		return &ReadOnlyError{Op: op}
	}
	return nil
}

// openReadOnly checks, without writing, what create would have made: every
// table of the areas not switched off, the query tables, the partition
// count (adopted when none is configured) and the event store's mark row.
// Engine checks are read but never fixed.
func (e *Engine) openReadOnly(ctx context.Context, cfg Config) error {
	if err := e.checkSettingsReadOnly(ctx); err != nil {
		return err
	}
	areas := map[dialect.Area]bool{}
	for _, a := range []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging, dialect.AreaCQRS, dialect.AreaSaga, dialect.AreaPublication} {
		areas[a] = true
	}
	for a, m := range cfg.Modes {
		// An area switched off and never created is not asked for; a
		// switched-off area whose tables exist is checked like the others
		// by the read-write engine, but it cannot be told apart here.
		if m == schema.Never {
			delete(areas, a)
		}
	}
	// The partition table is the first thing a read-write Open makes: its
	// absence is the plain "never initialised" case.
	var missing *schema.MissingTableError
	if err := schema.Verify(ctx, e.DB, e.Cat, schema.Objects(e.Cat, e.Names), areas); errors.As(err, &missing) {
		return &SchemaMissingError{What: "table " + missing.Table, Cause: err}
	} else if err != nil {
		return err
	}
	if err := e.checkKeyCollation(ctx, e.DB); err != nil {
		return err
	}
	modes := map[dialect.Area]schema.Mode{}
	for a := range cfg.Modes {
		modes[a] = cfg.Modes[a]
	}
	modes[dialect.AreaCQRS] = schema.Never // check the query tables, create none
	if err := schema.CheckQueryTables(ctx, e.DB, e.Cat, e.Names, cfg.QueryTables, cfg.Names.Prefixes[dialect.AreaCQRS], modes); err != nil {
		return err
	}
	if err := e.readPartitions(ctx, cfg.Partitions); err != nil {
		return err
	}
	if _, err := e.ReadMarkRow(ctx, e.DB, EventStoreTopic); errors.Is(err, sql.ErrNoRows) {
		return &SchemaMissingError{What: "the high-water-mark row of " + EventStoreTopic, Cause: err}
	} else if err != nil {
		return err
	}
	return nil
}

// readPartitions reads the persisted partition count: adopted when none is
// configured, else checked against the configured one.
func (e *Engine) readPartitions(ctx context.Context, configured int) error {
	table := e.Names.Shared["partition_metadata_table"]
	var persisted sql.NullInt64
	err := e.QueryRow(ctx, e.DB, dialect.PartitionRead, nil, nil).Scan(&persisted)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !persisted.Valid) {
		return &SchemaMissingError{What: "the partition count in " + table, Cause: err}
	}
	if err != nil {
		return fmt.Errorf("reading partition metadata: %w", err)
	}
	if configured == 0 {
		e.Partitions = int(persisted.Int64)
		return nil
	}
	if int(persisted.Int64) != configured {
		return &PartitionMismatchError{Table: table, Persisted: int(persisted.Int64), Configured: configured}
	}
	return nil
}

// checkSettingsReadOnly reads every engine check; a wrong setting refuses
// the start (a read-only engine fixes nothing).
func (e *Engine) checkSettingsReadOnly(ctx context.Context) error {
	for _, c := range e.Cat.Checks {
		got, err := readSetting(ctx, e.DB, c)
		if err != nil {
			return err
		}
		if !strings.EqualFold(got, c.Want) {
			return &EngineSettingError{Check: c.Name, Got: got, Want: c.Want, Remedy: c.Remedy}
		}
	}
	return nil
}
