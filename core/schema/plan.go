package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// QueryField is one declared query column (the Go form of @QueryField).
type QueryField struct {
	Column    string
	Kind      dialect.QueryFieldKind
	Precision int // KindDecimal only
	Scale     int // KindDecimal only
	Unique    bool
}

// QueryTable is a projection's query table (the Go form of @QueryProjection).
type QueryTable struct {
	// Projection is the projection's name; the table is derived from it
	// (with the cqrs prefix) unless Table is set.
	Projection string
	Table      string
	Fields     []QueryField
}

// Step is one DDL statement ready to run.
type Step struct {
	Script string
	Area   dialect.Area
	Table  string // the per-table value, or "" for shared scripts
	SQL    string
	// Unless, when set, is a query returning a row when the step is already
	// done (guards engines without IF NOT EXISTS); UnlessArgs are its binds.
	Unless     string
	UnlessArgs []any
}

// derivedIdentifier matches an identifier built around one or more
// placeholders, such as idx_${event_store_table}_global or
// idx_${query_table}_${column} (matched whole, so the composite is
// length-checked as the engine sees it).
var derivedIdentifier = regexp.MustCompile(`[A-Za-z0-9_]*(?:\$\{[a-z_]+\}[A-Za-z0-9_]*)+`)

// nonIdentifier are placeholders filled with SQL text, not a name.
var nonIdentifier = map[string]bool{"query_columns": true, "type": true}

// NameTooLongError reports a derived name over the engine's limit.
type NameTooLongError struct {
	Table   string
	Derived string
	Limit   int
	Dialect string
}

func (e *NameTooLongError) Error() string {
	return fmt.Sprintf("table name %s: derived name %s is %d characters, %s allows %d; choose a shorter table name (names are never truncated)",
		e.Table, e.Derived, len(e.Derived), e.Dialect, e.Limit)
}

// Unwrap makes errors.Is(err, ErrInvalidIdentifier) hold.
func (e *NameTooLongError) Unwrap() error { return ErrInvalidIdentifier }

// fill fills a template and checks every identifier derived from a
// placeholder against the dialect's limit: a table name over it is refused,
// a derived name over it is shortened by the catalogue's naming rule
// (Naming.Shorten) or refused when there is none.
func fill(cat *dialect.Catalogue, tmpl string, values map[string]string) (string, error) {
	if cat.Identity.MaxIdentifierLength <= 0 {
		return dialect.Fill(tmpl, values)
	}
	shortened := false
	for _, tok := range derivedIdentifier.FindAllString(tmpl, -1) {
		if nonIdentifier[strings.Join(dialect.Placeholders(tok), ",")] {
			continue
		}
		name, full, err := physicalName(cat, tok, values)
		if err != nil {
			return "", err
		}
		shortened = shortened || name != full
	}
	if !shortened {
		return dialect.Fill(tmpl, values)
	}
	// Each token is filled on its own: every ${…} of a template lies in
	// one derivedIdentifier match, so this is Fill with the shortened
	// names in place of the long ones.
	var ferr error
	out := derivedIdentifier.ReplaceAllStringFunc(tmpl, func(tok string) string {
		if nonIdentifier[strings.Join(dialect.Placeholders(tok), ",")] {
			got, err := dialect.Fill(tok, values)
			if err != nil && ferr == nil {
				ferr = err
			}
			return got
		}
		name, _, err := physicalName(cat, tok, values)
		if err != nil && ferr == nil {
			ferr = err
		}
		return name
	})
	return out, ferr
}

// physicalName fills one identifier token of a template and returns the
// name the engine gets and the full name it stands for. A table reference
// (the token is one placeholder) over the limit is refused; a derived name
// over it is shortened by the naming rule or refused.
func physicalName(cat *dialect.Catalogue, tok string, values map[string]string) (name, full string, err error) {
	full, err = dialect.Fill(tok, values)
	if err != nil {
		return "", "", err
	}
	limit := cat.Identity.MaxIdentifierLength
	if limit <= 0 || len(full) <= limit {
		return full, full, nil
	}
	phs := dialect.Placeholders(tok)
	plain := len(phs) == 1 && tok == "${"+phs[0]+"}"
	if plain || cat.Naming.Shorten == dialect.ShortenNever {
		table := tableOf(tok, values)
		if table == "" {
			table = full
		}
		return "", "", &NameTooLongError{Table: table, Derived: full, Limit: limit, Dialect: cat.Identity.Name}
	}
	name, err = DerivedName(cat, full)
	return name, full, err
}

// checkNamingRule refuses a naming rule the core cannot apply, whether or
// not this plan has a name to shorten, so a bad catalogue fails on its
// first run rather than on the first long name.
func checkNamingRule(cat *dialect.Catalogue) error {
	switch rule, limit := cat.Naming.Shorten, cat.Identity.MaxIdentifierLength; {
	case rule == dialect.ShortenNever:
		return nil
	case rule != dialect.ShortenHash:
		return &NamingRuleError{Dialect: cat.Identity.Name, Rule: rule, Limit: limit, Reason: "unknown rule; the core knows " + string(dialect.ShortenHash)}
	case limit < minShortenLimit:
		return &NamingRuleError{Dialect: cat.Identity.Name, Rule: rule, Limit: limit, Reason: fmt.Sprintf("the rule needs a limit of at least %d", minShortenLimit)}
	}
	return nil
}

// Plan builds every DDL step for names and query tables, in creation order.
// Nothing is executed. The whole naming plan is checked first: every table,
// sequence, index and column name, derived ones included, is validated,
// length-checked, not a reserved word of the engine, and unique under the
// engine's comparison (Catalogue.Naming) with one role each.
func Plan(cat *dialect.Catalogue, names *Names, queries []QueryTable, cqrsPrefix string) ([]Step, error) {
	if err := checkNamingRule(cat); err != nil {
		return nil, err
	}
	if err := checkQueryTablesDistinct(cat, queries, cqrsPrefix); err != nil {
		return nil, err
	}
	np := &namePlan{cat: cat}
	np.addNames(names)
	steps, err := planSteps(cat, names, queries, cqrsPrefix, np)
	if err != nil {
		return nil, err
	}
	if err := np.check(); err != nil {
		return nil, err
	}
	return steps, nil
}

func planSteps(cat *dialect.Catalogue, names *Names, queries []QueryTable, cqrsPrefix string, np *namePlan) ([]Step, error) {
	var steps []Step
	for _, sc := range cat.Scripts {
		var instances []map[string]string
		switch sc.PerTable {
		case "":
			instances = []map[string]string{names.Shared}
		case "event_store_table":
			for _, t := range names.EventTables {
				instances = append(instances, with(names.Shared, sc.PerTable, t))
			}
		case "aggregate_snapshots_table":
			for _, t := range names.SnapshotTables {
				instances = append(instances, with(names.Shared, sc.PerTable, t))
			}
		case "saga_instances_table":
			for _, t := range names.SagaTables {
				instances = append(instances, with(names.Shared, sc.PerTable, t))
			}
		case "query_table":
			for _, q := range queries {
				qs, err := queryTableSteps(cat, sc, names, q, cqrsPrefix, np)
				if err != nil {
					return nil, err
				}
				steps = append(steps, qs...)
			}
			continue
		default:
			return nil, fmt.Errorf("script %s: unknown per-table placeholder %q", sc.Name, sc.PerTable)
		}
		for _, vals := range instances {
			for _, st := range sc.Statements {
				sql, err := fill(cat, st, vals)
				if err != nil {
					return nil, fmt.Errorf("script %s: %w", sc.Name, err)
				}
				src := "script " + sc.Name
				if sc.PerTable != "" {
					src += " for " + vals[sc.PerTable]
				}
				np.addDerived(st, vals, src)
				step := Step{Script: sc.Name, Area: sc.Area, Table: vals[sc.PerTable], SQL: sql}
				if err := guard(cat, &step); err != nil {
					return nil, err
				}
				steps = append(steps, step)
			}
		}
	}
	return steps, nil
}

func with(base map[string]string, k, v string) map[string]string {
	m := make(map[string]string, len(base)+1)
	for a, b := range base {
		m[a] = b
	}
	m[k] = v
	return m
}

// ResolveQueryTable returns the validated table name of a query table.
func ResolveQueryTable(q QueryTable, cqrsPrefix string) (string, error) {
	name := q.Table
	if name == "" {
		if q.Projection == "" {
			return "", fmt.Errorf("query table declared without projection or table name")
		}
		name = cqrsPrefix + QueryTableName(q.Projection)
	}
	return name, ValidateIdentifier(name, "query table of projection "+strconv.Quote(q.Projection))
}

// QueryColumns renders the ${query_columns} text of a query table: one
// column definition per field, each followed by a comma.
func QueryColumns(cat *dialect.Catalogue, fields []QueryField) (string, error) {
	var b strings.Builder
	for _, f := range fields {
		if err := ValidateIdentifier(f.Column, "query column"); err != nil {
			return "", err
		}
		typ, ok := cat.QueryColumns.Types[f.Kind]
		if !ok {
			return "", fmt.Errorf("dialect %s has no column type for query-field kind %s", cat.Identity.Name, f.Kind)
		}
		if f.Kind == dialect.KindDecimal {
			if max := MaxDecimalPrecision(cat); f.Precision < 1 || f.Precision > max || f.Scale < 0 || f.Scale > f.Precision {
				return "", fmt.Errorf("query column %s: decimal(%d,%d) is out of range (%s holds at most %d digits)", f.Column, f.Precision, f.Scale, cat.Identity.Name, max)
			}
			typ = strings.NewReplacer("${precision}", strconv.Itoa(f.Precision), "${scale}", strconv.Itoa(f.Scale)).Replace(typ)
		}
		col, err := dialect.Fill(cat.QueryColumns.Column, map[string]string{"column": f.Column, "type": typ})
		if err != nil {
			return "", err
		}
		b.WriteString(col)
		b.WriteString(",\n    ")
	}
	return b.String(), nil
}

func queryTableSteps(cat *dialect.Catalogue, sc dialect.Script, names *Names, q QueryTable, prefix string, np *namePlan) ([]Step, error) {
	table, err := ResolveQueryTable(q, prefix)
	if err != nil {
		return nil, err
	}
	src := "query table of projection " + strconv.Quote(q.Projection)
	np.add(nameUse{name: table, kind: kindRelation, role: src, source: src})
	for _, f := range q.Fields {
		np.add(nameUse{name: f.Column, kind: kindColumn, source: "column of " + src})
	}
	cols, err := QueryColumns(cat, q.Fields)
	if err != nil {
		return nil, err
	}
	vals := with(names.Shared, "query_table", table)
	vals["query_columns"] = cols
	var steps []Step
	for _, st := range sc.Statements {
		sql, err := fill(cat, st, vals)
		if err != nil {
			return nil, fmt.Errorf("query table %s: %w", table, err)
		}
		np.addDerived(st, vals, "query table "+table)
		step := Step{Script: sc.Name, Area: sc.Area, Table: table, SQL: sql}
		if err := guard(cat, &step); err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	for _, f := range q.Fields {
		tmpl := cat.QueryColumns.Index
		if f.Unique {
			tmpl = cat.QueryColumns.UniqueIndex
		}
		v := with(vals, "column", f.Column)
		sql, err := fill(cat, tmpl, v)
		if err != nil {
			return nil, fmt.Errorf("query table %s: %w", table, err)
		}
		np.addDerived(tmpl, v, "query table "+table)
		step := Step{Script: sc.Name, Area: sc.Area, Table: table, SQL: sql}
		if cat.QueryColumns.IndexExists != "" {
			index, err := QueryIndexName(cat, tmpl, v)
			if err != nil {
				return nil, err
			}
			c := dialect.Compile(cat.QueryColumns.IndexExists, cat.Identity.Placeholder)
			args, err := c.Args(map[string]any{"table": catalogueName(cat, table), "index": catalogueName(cat, index)})
			if err != nil {
				return nil, err
			}
			step.Unless, step.UnlessArgs = c.SQL, args
		}
		steps = append(steps, step)
	}
	return steps, nil
}

// QueryIndexName is the index name a query-column index template creates:
// its first identifier built around ${column}, filled and, where it is over
// the engine's limit, shortened by the naming rule (the same name the DDL
// uses; idx_${query_table}_${column} in every built-in dialect).
func QueryIndexName(cat *dialect.Catalogue, tmpl string, values map[string]string) (string, error) {
	for _, tok := range derivedIdentifier.FindAllString(tmpl, -1) {
		phs := dialect.Placeholders(tok)
		if len(phs) > 1 || (len(phs) == 1 && tok != "${"+phs[0]+"}" && phs[0] == "column") {
			full, err := dialect.Fill(tok, values)
			if err != nil {
				return "", err
			}
			return DerivedName(cat, full)
		}
	}
	return "", fmt.Errorf("dialect %s: query index template names no index built around ${column}: %s", cat.Identity.Name, tmpl)
}

// catalogueName is how the engine stores an unquoted identifier.
func catalogueName(cat *dialect.Catalogue, name string) string {
	switch cat.Identity.FoldsUnquotedTo {
	case "lower":
		return strings.ToLower(name)
	case "upper":
		return strings.ToUpper(name)
	}
	return name
}
