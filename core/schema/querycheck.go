package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// ErrQueryTableMismatch is wrapped when an existing query table does not
// match its projection's declaration (or is missing with creation off).
var ErrQueryTableMismatch = errors.New("query table does not match its declaration")

// QueryTableError names the query table, the column, the shape found, the
// shape declared and what to do about it. Column is empty when the whole
// table is at fault (missing).
type QueryTableError struct {
	Table    string
	Column   string
	Found    string
	Declared string
	Remedy   string

	missing bool
}

func (e *QueryTableError) Error() string {
	var b strings.Builder
	b.WriteString("query table ")
	b.WriteString(e.Table)
	if e.Column != "" {
		b.WriteString(", column ")
		b.WriteString(e.Column)
	}
	fmt.Fprintf(&b, ": found %s, declared %s; %s", e.Found, e.Declared, e.Remedy)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrQueryTableMismatch) hold, and
// errors.Is(err, ErrMissingTable) for a missing table.
func (e *QueryTableError) Unwrap() []error {
	if e.missing {
		return []error{ErrQueryTableMismatch, ErrMissingTable}
	}
	return []error{ErrQueryTableMismatch}
}

// Querier runs queries; *sql.DB, *sql.Tx and *sql.Conn satisfy it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// catalogueColumn is one row of the dialect's Introspection.Columns query.
type catalogueColumn struct {
	Name      string
	Type      string // upper case, blanks collapsed
	Length    *int64
	Precision *int64
	Scale     *int64
}

// catalogueIndex is one index of a table, its columns in order.
type catalogueIndex struct {
	Name    string
	Unique  bool
	Columns []string // lower case; "" for an expression
}

// CheckQueryTables checks every declared query table against the database:
// an existing query table is never altered, only compared with its
// projection's declaration. modes are the schema switches (a missing table
// is reported whatever the mode, as creation would have made it otherwise).
func CheckQueryTables(ctx context.Context, db Querier, cat *dialect.Catalogue, names *Names, queries []QueryTable, cqrsPrefix string, modes map[dialect.Area]Mode) error {
	if len(queries) == 0 {
		return nil
	}
	intro := cat.Introspection
	if intro.TableExists == "" || intro.Columns == "" || intro.Indexes == "" {
		return fmt.Errorf("dialect %s lacks the introspection queries needed to check query tables", cat.Identity.Name)
	}
	var recordsID *catalogueColumn
	if rec := names.Shared["read_model_capture_records_table"]; rec != "" {
		cols, err := readColumns(ctx, db, cat, rec)
		if err != nil {
			return err
		}
		recordsID = cols["id"]
	}
	for _, q := range queries {
		table, err := ResolveQueryTable(q, cqrsPrefix)
		if err != nil {
			return err
		}
		if err := checkQueryTable(ctx, db, cat, names, q, table, recordsID, modes[dialect.AreaCQRS]); err != nil {
			return err
		}
	}
	return nil
}

// OmitExistingQueryTables drops from steps those of every query table that
// already exists: an existing query table is never altered (not even by an
// index), only checked with CheckQueryTables.
func OmitExistingQueryTables(ctx context.Context, db Querier, cat *dialect.Catalogue, steps []Step) ([]Step, error) {
	if cat.Introspection.TableExists == "" {
		return steps, nil
	}
	exists := map[string]bool{}
	out := steps[:0:0]
	for _, s := range steps {
		if s.Script == dialect.ScriptQueryTable && s.Table != "" {
			ok, seen := exists[s.Table]
			if !seen {
				var err error
				if ok, err = tableExists(ctx, db, cat, s.Table); err != nil {
					return nil, err
				}
				exists[s.Table] = ok
			}
			if ok {
				continue
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func checkQueryTable(ctx context.Context, db Querier, cat *dialect.Catalogue, names *Names, q QueryTable, table string, recordsID *catalogueColumn, mode Mode) error {
	exists, err := tableExists(ctx, db, cat, table)
	if err != nil {
		return err
	}
	if !exists {
		remedy := fmt.Sprintf("apply %s (tidemark schema prints it) or set schema creation for area %s to %q", dialect.ScriptQueryTable, dialect.AreaCQRS, Always)
		if mode != Never {
			remedy = fmt.Sprintf("it was not created; check %s and the connection's current schema", dialect.ScriptQueryTable)
		}
		return &QueryTableError{Table: table, Found: "no table", Declared: "the query table of projection " + strconv.Quote(q.Projection), Remedy: remedy, missing: true}
	}
	cols, err := readColumns(ctx, db, cat, table)
	if err != nil {
		return err
	}
	idxs, err := readIndexes(ctx, db, cat, table)
	if err != nil {
		return err
	}
	distinct := fmt.Sprintf("this is not a query table: set a distinct table for projection %q", q.Projection)
	for _, c := range []string{"read_model_id", "message_id"} {
		if cols[c] == nil {
			return &QueryTableError{Table: table, Column: c, Found: "no column", Declared: "a query table with read_model_id and message_id", Remedy: distinct}
		}
	}
	rebuild := rebuildRemedy(names, q, table)
	if found, want, ok := messageIDFits(cols["message_id"], recordsID); !ok {
		return &QueryTableError{Table: table, Column: "message_id", Found: found, Declared: want, Remedy: rebuild}
	}
	for _, f := range q.Fields {
		col := strings.ToLower(f.Column)
		declared := declaredShape(cat, f)
		c := cols[col]
		if c == nil {
			return &QueryTableError{Table: table, Column: f.Column, Found: "no column", Declared: declared, Remedy: addColumnRemedy(cat, names, q, table, f)}
		}
		if !columnFits(cat, f, c) {
			return &QueryTableError{Table: table, Column: f.Column, Found: shape(c), Declared: declared, Remedy: rebuild}
		}
		uniq := false
		for _, ix := range idxs {
			if ix.Unique && len(ix.Columns) == 1 && ix.Columns[0] == col {
				uniq = true
				break
			}
		}
		switch {
		case f.Unique && !uniq:
			return &QueryTableError{Table: table, Column: f.Column, Found: shape(c) + " without a unique index of its own", Declared: declared + " unique", Remedy: rebuild}
		case !f.Unique && uniq:
			return &QueryTableError{Table: table, Column: f.Column, Found: shape(c) + " with a unique index of its own", Declared: declared + " not unique", Remedy: rebuild}
		}
	}
	return nil
}

// rebuildRemedy is the spec's remedy for a query table of the wrong shape.
func rebuildRemedy(names *Names, q QueryTable, table string) string {
	name := func(ph, def string) string {
		if v := names.Shared[ph]; v != "" {
			return v
		}
		return def
	}
	return fmt.Sprintf("drop table %s and delete projection %q's rows from %s, %s, %s and %s, in that order: the table is created again in the declared shape and the projection refills it from the start of its topics",
		table, q.Projection,
		name("consumer_skipped_messages_table", "CONSUMER_SKIPPED_MESSAGES"),
		name("consumer_undelivered_messages_table", "CONSUMER_UNDELIVERED_MESSAGES"),
		name("consumer_checkpoints_table", "CONSUMER_CHECKPOINTS"),
		name("consumers_table", "CONSUMERS"))
}

// addColumnRemedy is the spec's fix for a declared field whose column is
// missing (json-projections, "Schema evolution"): add the column (NULL
// until written) and the index every query column has, then accept the
// changed declaration, which fills the column at each read model's next
// write, or rebuild to fill it at once. The statements are this dialect's
// own DDL for the table; the rebuild's remedy when they cannot be made.
func addColumnRemedy(cat *dialect.Catalogue, names *Names, q QueryTable, table string, f QueryField) string {
	def, err := QueryColumns(cat, []QueryField{f})
	if err != nil {
		return rebuildRemedy(names, q, table)
	}
	stmts := []string{fmt.Sprintf("ALTER TABLE %s ADD %s", table, strings.TrimSuffix(strings.TrimSpace(def), ","))}
	tmpl := cat.QueryColumns.Index
	if f.Unique {
		tmpl = cat.QueryColumns.UniqueIndex
	}
	if tmpl != "" {
		index, err := fill(cat, tmpl, with(with(names.Shared, "query_table", table), "column", f.Column))
		if err != nil {
			return rebuildRemedy(names, q, table)
		}
		stmts = append(stmts, index)
	}
	return fmt.Sprintf("add the column and its index (%s), then accept the changed declaration (projection.Accept or tidemark projections accept %s: each read model's column is filled at its next write) or rebuild the projection (tidemark projections rebuild %s) to fill it for every read model now",
		strings.Join(stmts, "; "), q.Projection, q.Projection)
}

// declaredShape renders a field's kind and this dialect's column type.
func declaredShape(cat *dialect.Catalogue, f QueryField) string {
	typ := cat.QueryColumns.Types[f.Kind]
	if f.Kind == dialect.KindDecimal {
		typ = strings.NewReplacer("${precision}", strconv.Itoa(f.Precision), "${scale}", strconv.Itoa(f.Scale)).Replace(typ)
	}
	if typ == "" {
		return string(f.Kind)
	}
	return string(f.Kind) + " " + typ
}

// shape renders a column as read from the catalogue, e.g. VARCHAR(255).
func shape(c *catalogueColumn) string {
	switch TypeFamily(c.Type) {
	case "CHAR", "VARCHAR", "NCHAR", "NVARCHAR":
		if c.Length != nil {
			if *c.Length < 0 {
				return c.Type + "(MAX)"
			}
			return fmt.Sprintf("%s(%d)", c.Type, *c.Length)
		}
	case "DECIMAL":
		if c.Precision != nil {
			s := int64(0)
			if c.Scale != nil {
				s = *c.Scale
			}
			return fmt.Sprintf("%s(%d,%d)", c.Type, *c.Precision, s)
		}
	case "TIME", "TIMESTAMP":
		if c.Scale != nil {
			return fmt.Sprintf("%s(%d)", c.Type, *c.Scale)
		}
	}
	return c.Type
}

// messageIDFits tells whether message_id can hold a message id as the
// read-model records table's id does: a UUID where that id is a UUID, a
// (non-national) character type of at least 36 characters elsewhere.
func messageIDFits(c, recordsID *catalogueColumn) (found, want string, ok bool) {
	found = shape(c)
	uuid := recordsID != nil && TypeFamily(recordsID.Type) == "UUID"
	if uuid {
		return found, "UUID, as the read-model records table's id", TypeFamily(c.Type) == "UUID"
	}
	want = "CHAR(36) or VARCHAR(36) (a character type of at least 36 characters, not national), as the read-model records table's id"
	switch TypeFamily(c.Type) {
	case "CHAR", "VARCHAR":
		return found, want, c.Length == nil || *c.Length < 0 || *c.Length >= 36
	case "UUID":
		// Only where the records table's id could not be read.
		return found, want, recordsID == nil
	}
	return found, want, false
}

// columnFits tells whether a column holds every value of its field's kind:
// its family is one the dialect accepts for the kind
// (EngineFacts.QueryTypes), and it is wide enough.
func columnFits(cat *dialect.Catalogue, f QueryField, c *catalogueColumn) bool {
	fam := TypeFamily(c.Type)
	accepted := false
	for _, a := range QueryTypesOf(cat, f.Kind) {
		if a == fam {
			accepted = true
			break
		}
	}
	if !accepted {
		return false
	}
	atLeast := func(p *int64, n int64) bool { return p == nil || *p >= n }
	switch f.Kind {
	case dialect.KindText:
		if fam == "LARGE TEXT" {
			return true
		}
		// 255 characters: the spec's VARCHAR(255); -1 is SQL Server's MAX.
		return c.Length == nil || *c.Length < 0 || *c.Length >= 255
	case dialect.KindDecimal:
		if c.Precision == nil {
			return true // unconstrained (PostgreSQL's NUMERIC)
		}
		scale := int64(0)
		if c.Scale != nil {
			scale = *c.Scale
		}
		return *c.Precision-scale >= int64(f.Precision-f.Scale) && scale >= int64(f.Scale)
	case dialect.KindTime:
		return atLeast(c.Scale, int64(RequiredTimeDigits(cat)))
	case dialect.KindInstant:
		return atLeast(c.Scale, int64(RequiredInstantDigits(cat)))
	}
	return true
}

func tableExists(ctx context.Context, db Querier, cat *dialect.Catalogue, table string) (bool, error) {
	c := dialect.Compile(cat.Introspection.TableExists, cat.Identity.Placeholder)
	args, err := c.Args(map[string]any{"table": catalogueName(cat, table)})
	if err != nil {
		return false, err
	}
	var one any
	err = db.QueryRowContext(ctx, c.SQL, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking query table %s: %w", table, err)
	}
	return true, nil
}

// Column is one column as the database's own catalogue reports it, through
// the dialect's Introspection.Columns query.
type Column struct {
	Name      string
	Type      string // upper case, blanks collapsed
	Length    *int64 // nil where it does not apply
	Precision *int64
	Scale     *int64 // fractional-second digits for time types
	Nullable  bool
}

// ReadColumns reads a table's columns in the catalogue's order.
func ReadColumns(ctx context.Context, db Querier, cat *dialect.Catalogue, table string) ([]Column, error) {
	c := dialect.Compile(cat.Introspection.Columns, cat.Identity.Placeholder)
	args, err := c.Args(map[string]any{"table": catalogueName(cat, table)})
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, c.SQL, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []Column
	for rows.Next() {
		var name, typ any
		var length, prec, scale, nullable any
		if err := rows.Scan(&name, &typ, &length, &prec, &scale, &nullable); err != nil {
			return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
		}
		col := Column{Name: AsString(name), Type: strings.Join(strings.Fields(strings.ToUpper(AsString(typ))), " "), Nullable: AsBool(nullable)}
		for _, p := range []struct {
			dst **int64
			v   any
		}{{&col.Length, length}, {&col.Precision, prec}, {&col.Scale, scale}} {
			n, err := AsInt64(p.v)
			if err != nil {
				return nil, fmt.Errorf("reading column %s.%s: %w", table, col.Name, err)
			}
			*p.dst = n
		}
		out = append(out, col)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	return out, nil
}

// readColumns reads a table's columns, keyed by lower-case name.
func readColumns(ctx context.Context, db Querier, cat *dialect.Catalogue, table string) (map[string]*catalogueColumn, error) {
	cols, err := ReadColumns(ctx, db, cat, table)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*catalogueColumn, len(cols))
	for _, c := range cols {
		out[strings.ToLower(c.Name)] = &catalogueColumn{Name: c.Name, Type: c.Type, Length: c.Length, Precision: c.Precision, Scale: c.Scale}
	}
	return out, nil
}

// readIndexes reads a table's indexes, primary key and unique constraints
// included, with their columns in order.
func readIndexes(ctx context.Context, db Querier, cat *dialect.Catalogue, table string) ([]*catalogueIndex, error) {
	c := dialect.Compile(cat.Introspection.Indexes, cat.Identity.Placeholder)
	args, err := c.Args(map[string]any{"table": catalogueName(cat, table)})
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, c.SQL, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the indexes of %s: %w", table, err)
	}
	defer rows.Close()
	byName := map[string]*catalogueIndex{}
	var out []*catalogueIndex
	for rows.Next() {
		var name, column, unique, ordinal any
		if err := rows.Scan(&name, &column, &unique, &ordinal); err != nil {
			return nil, fmt.Errorf("reading the indexes of %s: %w", table, err)
		}
		n := AsString(name)
		ix := byName[n]
		if ix == nil {
			ix = &catalogueIndex{Name: n, Unique: AsBool(unique)}
			byName[n] = ix
			out = append(out, ix)
		}
		ix.Columns = append(ix.Columns, strings.ToLower(AsString(column)))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the indexes of %s: %w", table, err)
	}
	return out, nil
}
