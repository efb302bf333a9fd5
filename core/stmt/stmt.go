// Package stmt is the typed form of the catalogue's statements, generated
// from their specs (core/dialect, statements_<area>.go) by stmtgen: per
// statement a params struct (its #{binds} and the per-call ${tables}), a
// row struct for a statement that returns columns, and Exec<Name>,
// Query<Name> and QueryRow<Name> over the engine's Exec, Query and
// QueryRow, so the engine's error classification, prepared statements and
// read-only refusal apply unchanged. A bind or column renamed in a spec
// changes a field name here and breaks the build of every call site.
//
// Regenerate after changing a spec or the generator's types table with
// go generate ./core/stmt; a test fails while the files are stale.
package stmt

//go:generate go run ../../internal/stmtgen/cmd/stmtgen -dialect ../dialect -out .

import (
	"database/sql"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// scanner is *sql.Rows or engine.Row.
type scanner interface{ Scan(dest ...any) error }

// nullable is a pointer bind's value: nil (NULL) or what it points to.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// Rows are the rows of a Query<Name> call, each scanned into a row struct
// R. Errors of Row and Err are classified as the engine's (see
// engine.Engine.Exec).
type Rows[R any] struct {
	rows *sql.Rows
	e    *engine.Engine
	scan func(scanner, *R) error
}

// Next prepares the next row (see sql.Rows.Next).
func (rs Rows[R]) Next() bool { return rs.rows.Next() }

// Row scans the current row.
func (rs Rows[R]) Row() (R, error) {
	var r R
	err := rs.scan(rs.rows, &r)
	return r, rs.e.Errors.Wrap(err)
}

// Err is the error that ended the iteration, if any.
func (rs Rows[R]) Err() error { return rs.e.Errors.Wrap(rs.rows.Err()) }

// Close closes the rows.
func (rs Rows[R]) Close() error { return rs.rows.Close() }
