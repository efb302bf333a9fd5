package config

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

var (
	// dialectName is the shape of a plugin name: it becomes part of a file
	// name (tidemark-dialect-<name>), so no path separators or dots.
	dialectName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	envName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sha256Hex   = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

// maxPartitions is the engine's limit: partition_key is a SMALLINT.
const maxPartitions = 32767

// Validate checks a Config built or changed in code (Load and Parse have
// already validated theirs). Errors carry the file's lines while File is the
// name it was loaded under; a caller that overrides fields (command-line
// flags) renames File to say so, and the errors then carry no line.
func (c *Config) Validate() error {
	if c.loc.file != c.File {
		c.loc = locator{file: c.File}
	}
	return c.validate(c.loc)
}

func (c *Config) validate(l locator) error {
	for _, check := range []func(locator) error{c.checkConnection, c.checkPrefixes, c.checkTables, c.checkModes, c.checkSagas, c.checkAggregates, c.checkQueryTables} {
		if err := check(l); err != nil {
			return err
		}
	}
	// Whatever the per-key checks let through, the schema's own resolution
	// has the last word (e.g. aggregates of one type with different tables).
	names, err := schema.Resolve(c.Schema())
	if err != nil {
		return l.at(err.Error(), err, false)
	}
	return c.checkCollisions(l, names)
}

func (c *Config) checkConnection(l locator) error {
	switch {
	case c.Dialect != "" && !dialectName.MatchString(c.Dialect):
		return l.at(fmt.Sprintf("dialect %q must match %s", c.Dialect, dialectName), nil, false, "dialect")
	case c.Plugin.SHA256 != "" && !sha256Hex.MatchString(c.Plugin.SHA256):
		return l.at("sha256 must be 64 hexadecimal digits", nil, false, "plugin", "sha256")
	case c.DSN != "" && c.DSNEnv != "":
		return l.at("set dsn or dsn_env, not both (dsn_env keeps the password out of the file)", nil, true, "dsn_env")
	case c.DSNEnv != "" && !envName.MatchString(c.DSNEnv):
		return l.at(fmt.Sprintf("dsn_env %q is not an environment variable name", c.DSNEnv), nil, false, "dsn_env")
	case c.Partitions < 0 || c.Partitions > maxPartitions:
		return l.at(fmt.Sprintf("partitions %d is out of range 1..%d (0 or absent: 16)", c.Partitions, maxPartitions), nil, false, "partitions")
	}
	return nil
}

func areaNamed(s string, withPublication bool) bool {
	areas := prefixedAreas
	if withPublication {
		areas = allAreas
	}
	for _, a := range areas {
		if string(a) == s {
			return true
		}
	}
	return false
}

func areaList(withPublication bool) string {
	areas := prefixedAreas
	if withPublication {
		areas = allAreas
	}
	s := make([]string, len(areas))
	for i, a := range areas {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

func (c *Config) checkPrefixes(l locator) error {
	if c.Prefix != "" {
		if err := schema.ValidateIdentifier(c.Prefix, "table prefix"); err != nil {
			return l.at(err.Error(), err, false, "prefix")
		}
	}
	for _, area := range sortedKeys(c.Prefixes) {
		p := c.Prefixes[area]
		if !areaNamed(area, false) {
			reason := fmt.Sprintf("unknown area %q (areas with a prefix: %s)", area, areaList(false))
			if area == string(dialect.AreaPublication) {
				reason = "the publication area takes no prefix (EVENT_PUBLICATION_METADATA is shared by every application)"
			}
			return l.at(reason, nil, true, "prefixes", area)
		}
		if p == "" {
			continue
		}
		if err := schema.ValidateIdentifier(p, "table prefix of area "+area); err != nil {
			return l.at(err.Error(), err, false, "prefixes", area)
		}
	}
	return nil
}

func (c *Config) checkTables(l locator) error {
	for _, ph := range sortedKeys(c.Tables) {
		name := c.Tables[ph]
		if _, ok := dialect.DefaultNames[ph]; !ok {
			return l.at(fmt.Sprintf("unknown table placeholder %q (one of %s)", ph, strings.Join(sortedKeys(dialect.DefaultNames), ", ")), nil, true, "tables", ph)
		}
		full := c.AreaPrefix(dialect.PlaceholderArea[ph]) + name
		if err := schema.ValidateIdentifier(full, "${"+ph+"}"); err != nil {
			return l.at(err.Error(), err, false, "tables", ph)
		}
	}
	return nil
}

func (c *Config) checkModes(l locator) error {
	for _, area := range sortedKeys(c.Modes) {
		if !areaNamed(area, true) {
			return l.at(fmt.Sprintf("unknown area %q (one of %s)", area, areaList(true)), nil, true, "modes", area)
		}
		if m := schema.Mode(c.Modes[area]); m != schema.Always && m != schema.Never {
			return l.at(fmt.Sprintf("mode %q: one of %s, %s", m, schema.Always, schema.Never), nil, false, "modes", area)
		}
	}
	return nil
}

// checkAggregates resolves the aggregates one more at a time, so the first
// refused name is pinned to its aggregate and key.
func (c *Config) checkAggregates(l locator) error {
	base := c.Schema()
	seen := map[string]int{}
	for i, a := range c.Aggregates {
		sa := a.schema()
		if sa.Name == "" {
			return l.at("an aggregate needs type: namespace.Name", nil, true, "aggregates", i, "type")
		}
		if sa.Namespace == "" {
			return l.at(fmt.Sprintf("aggregate type %q has no namespace: write namespace.Name (e.g. banking.%s)", a.Type, a.Type), nil, false, "aggregates", i, "type")
		}
		if j, dup := seen[a.Type]; dup {
			return l.at(fmt.Sprintf("aggregate type %s is already declared at aggregates[%d]", a.Type, j), nil, false, "aggregates", i, "type")
		}
		seen[a.Type] = i
		cfg := base
		cfg.Aggregates, cfg.SagaTables = base.Aggregates[:i+1], nil
		if _, err := schema.Resolve(cfg); err != nil {
			key := "type"
			var inv *schema.InvalidNameError
			if errors.As(err, &inv) {
				switch inv.Name {
				case a.EventTable:
					key = "event_table"
				case a.SnapshotTable:
					key = "snapshot_table"
				}
			}
			return l.at(err.Error(), err, false, "aggregates", i, key)
		}
	}
	return nil
}

// reservedColumns are every query table's own columns.
var reservedColumns = map[string]bool{"read_model_id": true, "message_id": true}

func (c *Config) checkQueryTables(l locator) error {
	prefix := c.AreaPrefix(dialect.AreaCQRS)
	tables := map[string]int{}
	for i, q := range c.QueryTables {
		key := "table"
		if q.Table == "" {
			key = "projection"
		}
		name, err := schema.ResolveQueryTable(schema.QueryTable{Projection: q.Projection, Table: q.Table}, prefix)
		if err != nil {
			return l.at(err.Error(), err, true, "query_tables", i, key)
		}
		if j, dup := tables[strings.ToUpper(name)]; dup {
			return l.at(fmt.Sprintf("query table %s is already declared at query_tables[%d]; every projection needs its own table", name, j), nil, false, "query_tables", i, key)
		}
		tables[strings.ToUpper(name)] = i
		if err := checkColumns(l, i, q.Columns); err != nil {
			return err
		}
	}
	return nil
}

func checkColumns(l locator, i int, cols []Column) error {
	seen := map[string]int{}
	for j, col := range cols {
		if err := schema.ValidateIdentifier(col.Name, "query column"); err != nil {
			return l.at(err.Error(), err, true, "query_tables", i, "columns", j, "name")
		}
		lower := strings.ToLower(col.Name)
		if reservedColumns[lower] {
			return l.at(fmt.Sprintf("column %s is every query table's own; choose another name", col.Name), nil, false, "query_tables", i, "columns", j, "name")
		}
		if k, dup := seen[lower]; dup {
			return l.at(fmt.Sprintf("column %s is already declared at columns[%d]", col.Name, k), nil, false, "query_tables", i, "columns", j, "name")
		}
		seen[lower] = j
		kind, ok := ParseKind(col.Kind)
		if !ok {
			return l.at(fmt.Sprintf("kind %q: one of text, integer, decimal, date, time, instant, boolean", col.Kind), nil, true, "query_tables", i, "columns", j, "kind")
		}
		if kind != dialect.KindDecimal {
			if col.Precision != 0 || col.Scale != 0 {
				return l.at("precision and scale apply to kind decimal only", nil, true, "query_tables", i, "columns", j, "precision")
			}
			continue
		}
		if col.Precision < 1 || col.Precision > 38 {
			return l.at(fmt.Sprintf("precision %d is out of range 1..38", col.Precision), nil, true, "query_tables", i, "columns", j, "precision")
		}
		if col.Scale < 0 || col.Scale > col.Precision {
			return l.at(fmt.Sprintf("scale %d is out of range 0..precision (%d)", col.Scale, col.Precision), nil, true, "query_tables", i, "columns", j, "scale")
		}
	}
	return nil
}

func (c *Config) checkSagas(l locator) error {
	for i, s := range c.SagaTables {
		if err := schema.ValidateIdentifier(s, "saga table"); err != nil {
			return l.at(err.Error(), err, false, "saga_tables", i)
		}
	}
	return nil
}

// checkCollisions refuses two different roles resolving to one table name
// (engines fold case, so the comparison ignores it).
func (c *Config) checkCollisions(l locator, names *schema.Names) error {
	roles := map[string]string{}
	claim := func(name, role string, path ...any) error {
		u := strings.ToUpper(name)
		if prev, ok := roles[u]; ok && prev != role {
			return l.at(fmt.Sprintf("table %s would be both the %s and the %s", name, prev, role), nil, false, path...)
		}
		roles[u] = role
		return nil
	}
	perTable := map[string]string{"event_store_table": "event table", "aggregate_snapshots_table": "snapshot table", "saga_instances_table": "saga table"}
	for _, ph := range sortedKeys(names.Shared) {
		role := perTable[ph]
		if role == "" {
			role = "${" + ph + "}"
		}
		if err := claim(names.Shared[ph], role, "tables", ph); err != nil {
			return err
		}
	}
	for i, a := range c.Aggregates {
		t := names.ByAggregate[a.schema().Type()]
		if err := claim(t.Events, "event table", "aggregates", i, "type"); err != nil {
			return err
		}
		if err := claim(t.Snapshots, "snapshot table", "aggregates", i, "type"); err != nil {
			return err
		}
	}
	for i, s := range c.SagaTables {
		if err := claim(s, "saga table", "saga_tables", i); err != nil {
			return err
		}
	}
	for i, q := range c.QueryTables {
		name, _ := schema.ResolveQueryTable(schema.QueryTable{Projection: q.Projection, Table: q.Table}, c.AreaPrefix(dialect.AreaCQRS))
		if err := claim(name, "query table of "+q.Projection, "query_tables", i); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckDialect plans the whole schema with a dialect's catalogue, nothing
// executed, so what only the dialect knows (its identifier length limit, its
// column types) is refused now, pinned to the key that named the table.
func (c *Config) CheckDialect(cat *dialect.Catalogue) error {
	names, err := schema.Resolve(c.Schema())
	if err != nil {
		return c.loc.at(err.Error(), err, false)
	}
	_, err = schema.Plan(cat, names, c.Queries(), c.AreaPrefix(dialect.AreaCQRS))
	if err == nil {
		return nil
	}
	var long *schema.NameTooLongError
	if errors.As(err, &long) {
		return c.loc.at(err.Error(), err, false, c.keyOf(names, long.Table)...)
	}
	return c.loc.at(err.Error(), err, false)
}

// keyOf finds the key whose value names table (nil: the whole file).
func (c *Config) keyOf(names *schema.Names, table string) []any {
	for i, a := range c.Aggregates {
		t := names.ByAggregate[a.schema().Type()]
		switch table {
		case a.EventTable:
			return []any{"aggregates", i, "event_table"}
		case a.SnapshotTable:
			return []any{"aggregates", i, "snapshot_table"}
		case t.Events, t.Snapshots:
			if a.OwnTable {
				return []any{"aggregates", i, "type"}
			}
		}
	}
	for i, q := range c.QueryTables {
		if name, _ := schema.ResolveQueryTable(schema.QueryTable{Projection: q.Projection, Table: q.Table}, c.AreaPrefix(dialect.AreaCQRS)); name == table {
			if q.Table != "" {
				return []any{"query_tables", i, "table"}
			}
			return []any{"query_tables", i, "projection"}
		}
	}
	for i, s := range c.SagaTables {
		if s == table {
			return []any{"saga_tables", i}
		}
	}
	for ph, v := range names.Shared {
		if v == table {
			if _, ok := c.Tables[ph]; ok {
				return []any{"tables", ph}
			}
			return []any{"prefixes", string(dialect.PlaceholderArea[ph])}
		}
	}
	return nil
}
