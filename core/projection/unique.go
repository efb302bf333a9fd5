package projection

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// UniqueFieldError reports an apply whose read model would hold a value of
// a unique query field (Unique) that another read model holds: the query
// row's write was refused by the field's unique index. It is not
// transient: the consumer's retry budget and error policy apply (HALT by
// default). errors.Is(err, sqlerr.ErrUniqueViolation) holds, and the
// engine's error is reached by Unwrap.
type UniqueFieldError struct {
	Projection string
	// Key is the read model the apply wrote.
	Key string
	// Columns are the violated field's column; every unique field's column
	// (in declaration order) when the engine's error does not tell which
	// index refused the row.
	Columns []string
	// Values are the column values the apply wrote, one per column.
	Values []any
	// Err is the engine's error.
	Err error
}

func (e *UniqueFieldError) Error() string {
	return fmt.Sprintf("%s: %v", e.Text(), e.Err)
}

// Text is the error's own part, without the engine's error.
func (e *UniqueFieldError) Text() string {
	parts := make([]string, len(e.Columns))
	for i, c := range e.Columns {
		parts[i] = fmt.Sprintf("%s = %v", c, e.Values[i])
	}
	which := "the unique field"
	if len(e.Columns) > 1 {
		which = "one of the unique fields"
	}
	return fmt.Sprintf("projection %q: read model %q: %s %s is another read model's", e.Projection, e.Key, which, strings.Join(parts, ", "))
}

// Unwrap returns the engine's error.
func (e *UniqueFieldError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, sqlerr.ErrUniqueViolation) hold whatever class
// the engine's rules gave the violation.
func (e *UniqueFieldError) Is(target error) bool { return target == sqlerr.ErrUniqueViolation }

// uniqueErr is the *UniqueFieldError of a query-row write of key refused
// for a unique violation (args are the write's binds), or err as the
// write error when the projection declares no unique field or err is not
// a unique violation.
func (s *Store[S]) uniqueErr(key string, args map[string]any, err error) error {
	if !errors.Is(err, sqlerr.ErrUniqueViolation) {
		return s.writeErr(key, err)
	}
	var all, named []int
	constraint := sqlerr.Extract(err).Constraint
	var se *sqlerr.Error
	if errors.As(err, &se) && se.Details.Constraint != "" {
		constraint = se.Details.Constraint
	}
	for i := range s.p.fields {
		f := s.p.fields[i].decl
		if !f.Unique {
			continue
		}
		all = append(all, i)
		if s.violates(constraint, err.Error(), f.Column) {
			named = append(named, i)
		}
	}
	if len(all) == 0 {
		return s.writeErr(key, err)
	}
	if len(named) == 0 {
		named = all
	}
	ue := &UniqueFieldError{Projection: s.p.name, Key: key, Err: err}
	for _, i := range named {
		ue.Columns = append(ue.Columns, s.p.fields[i].decl.Column)
		ue.Values = append(ue.Values, args[fieldBind(i)])
	}
	return ue
}

// violates tells whether the engine's constraint name is column's unique
// index, on the query table or its shadow: the index's name (schema- or
// table-qualified on some engines), or the column itself where the engine
// names the columns instead (SQLite: "table.column"). Where no constraint
// name was read off the error (a message shape the rules do not know:
// HSQLDB's "unique constraint or index violation: IDX_…"), the index's
// name as a word of the message counts.
func (s *Store[S]) violates(constraint, msg, column string) bool {
	if constraint == "" {
		for _, idx := range s.uniqueIndexes(column) {
			if regexp.MustCompile(`(?i)(^|[^\w$])` + regexp.QuoteMeta(idx) + `($|[^\w$])`).MatchString(msg) {
				return true
			}
		}
		return false
	}
	for _, part := range strings.Split(constraint, ",") {
		name := strings.TrimSpace(part)
		if i := strings.LastIndex(name, "."); i >= 0 {
			name = name[i+1:]
		}
		name = strings.Trim(name, "\"'`[]")
		if strings.EqualFold(name, column) {
			return true
		}
		for _, idx := range s.uniqueIndexes(column) {
			if strings.EqualFold(name, idx) {
				return true
			}
		}
	}
	return false
}

// uniqueIndexes are the names of column's unique index on the query table
// and on its shadow.
func (s *Store[S]) uniqueIndexes(column string) []string {
	var out []string
	for _, table := range []string{s.table, s.shadow} {
		if table == "" {
			continue
		}
		idx, err := schema.QueryIndexName(s.e.Cat, s.e.Cat.QueryColumns.UniqueIndex, map[string]string{"query_table": table, "column": column})
		if err == nil {
			out = append(out, idx)
		}
	}
	return out
}
