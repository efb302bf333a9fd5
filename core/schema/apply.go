package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Mode is an area's schema switch.
type Mode string

// Schema modes.
const (
	Always Mode = "always" // create what is missing at startup (default)
	Never  Mode = "never"  // create nothing; verify the tables exist
)

// ErrMissingTable is wrapped when a table is missing with creation off.
var ErrMissingTable = errors.New("missing table")

// MissingTableError names the missing object and the script that creates it.
type MissingTableError struct {
	Table  string
	Script string
	Area   dialect.Area
}

func (e *MissingTableError) Error() string {
	return fmt.Sprintf("table %s is missing and schema creation for area %s is off: apply %s (tidemark schema prints it) or set the area to %q",
		e.Table, e.Area, e.Script, Always)
}

// Unwrap makes errors.Is(err, ErrMissingTable) hold.
func (e *MissingTableError) Unwrap() error { return ErrMissingTable }

// Execer runs statements; *sql.DB, *sql.Tx and *sql.Conn satisfy it.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Apply runs the steps of every area whose mode is Always (the default) in
// order. Steps are idempotent, so running Apply twice changes nothing.
func Apply(ctx context.Context, db Execer, steps []Step, modes map[dialect.Area]Mode) error {
	return ApplyRetrying(ctx, db, steps, modes, nil)
}

// raceAttempts bounds how often one step is run again after a concurrent
// creation got in its way: each retry sees more of the other process's
// work, and 5 was never exhausted in 40 rounds of 4 processes on H2 and
// HSQLDB; a persistent error still surfaces.
const raceAttempts = 5

// ApplyRetrying is Apply where a step failing with an error race reports as
// a concurrent creation of the same object ("already exists", a
// serialization failure of the catalogue) is run again: being idempotent,
// the rerun finds the object and does nothing. race may be nil.
func ApplyRetrying(ctx context.Context, db Execer, steps []Step, modes map[dialect.Area]Mode, race func(error) bool) error {
	for _, s := range steps {
		if modes[s.Area] == Never {
			continue
		}
		var err error
		for attempt := 1; ; attempt++ {
			err = applyStep(ctx, db, s)
			if err == nil || race == nil || !race(err) || attempt == raceAttempts {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func applyStep(ctx context.Context, db Execer, s Step) error {
	if s.Unless != "" {
		var one any
		err := db.QueryRowContext(ctx, s.Unless, s.UnlessArgs...).Scan(&one)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("script %s: checking %s: %w", s.Script, s.Table, err)
		}
	}
	if _, err := db.ExecContext(ctx, s.SQL); err != nil {
		return fmt.Errorf("script %s: %w\n%s", s.Script, err, s.SQL)
	}
	return nil
}

// TableExists reports whether table exists, with the dialect's
// Introspection.TableExists query.
func TableExists(ctx context.Context, db Querier, cat *dialect.Catalogue, table string) (bool, error) {
	return tableExists(ctx, db, cat, table)
}

// Object is a concrete table or sequence the schema needs.
type Object struct {
	Name   string
	Kind   dialect.ObjectKind
	Script string
	Area   dialect.Area
}

// Objects lists every concrete object of the catalogue's scripts for names
// (query tables excluded: they are checked with their declarations).
func Objects(cat *dialect.Catalogue, names *Names) []Object {
	var out []Object
	for _, sc := range cat.Scripts {
		for _, o := range sc.Objects {
			var values []string
			switch o.Placeholder {
			case "event_store_table":
				values = names.EventTables
			case "aggregate_snapshots_table":
				values = names.SnapshotTables
			case "saga_instances_table":
				values = names.SagaTables
			case "query_table":
				continue
			default:
				values = []string{names.Shared[o.Placeholder]}
			}
			for _, v := range values {
				out = append(out, Object{Name: v, Kind: o.Kind, Script: sc.Name, Area: sc.Area})
			}
		}
	}
	return out
}

// Verify checks that every object of the given areas exists, using the
// dialect's introspection; the first missing one is a *MissingTableError.
func Verify(ctx context.Context, db Execer, cat *dialect.Catalogue, objs []Object, areas map[dialect.Area]bool) error {
	for _, o := range objs {
		if !areas[o.Area] {
			continue
		}
		q, param := cat.Introspection.TableExists, "table"
		if o.Kind == dialect.ObjectSequence {
			q, param = cat.Introspection.SequenceExists, "sequence"
		}
		if q == "" {
			return fmt.Errorf("dialect %s has no introspection query for a %s", cat.Identity.Name, o.Kind)
		}
		c := dialect.Compile(q, cat.Identity.Placeholder)
		args, err := c.Args(map[string]any{param: catalogueName(cat, o.Name)})
		if err != nil {
			return err
		}
		var one any
		err = db.QueryRowContext(ctx, c.SQL, args...).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return &MissingTableError{Table: o.Name, Script: o.Script, Area: o.Area}
		}
		if err != nil {
			return fmt.Errorf("checking %s %s: %w", o.Kind, o.Name, err)
		}
	}
	return nil
}
