// Package config loads tidemark.yaml, the one configuration every tidemark
// command and a Go application read: the dialect, where the database is, and
// every table name (prefixes, overrides, per-aggregate tables, query tables,
// saga tables), the partition count and the schema switch per area.
//
// The file's schema is documented in docs/configuration.md. Unknown keys and
// invalid names are refused with the file, line and reason (*Error), before
// any SQL runs.
package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// DefaultFile is the file commands read when no --config is given and
// $TIDEMARK_CONFIG is unset (in the working directory, when it exists).
const DefaultFile = "tidemark.yaml"

// EnvFile names the environment variable holding the configuration's path.
const EnvFile = "TIDEMARK_CONFIG"

// Config is tidemark.yaml. The zero Config is valid: SQLite defaults, no
// prefixes, the shared tables only.
type Config struct {
	// File is the path the configuration was loaded from ("" when built in code).
	File string `yaml:"-"`

	// Dialect names the dialect plugin (tidemark-dialect-<name>, else a
	// built-in), e.g. "postgres".
	Dialect string `yaml:"dialect"`
	// Plugin locates and pins the plugin binary.
	Plugin Plugin `yaml:"plugin"`
	// Engine is the database engine when it differs from the dialect's name
	// (conformance only, e.g. dialect mysql on engine mariadb).
	Engine string `yaml:"engine"`
	// Driver is the database/sql driver (default: the dialect's).
	Driver string `yaml:"driver"`
	// DSN is the data source name. It is a Secret: it never prints. Prefer
	// DSNEnv, so the file holds no password.
	DSN Secret `yaml:"dsn"`
	// DSNEnv names an environment variable holding the DSN.
	DSNEnv string `yaml:"dsn_env"`
	// Partitions is the fixed partition count (0: the engine's default, 16).
	Partitions int `yaml:"partitions"`

	// Prefix is the table prefix of every prefixed area; Prefixes overrides
	// it per area (eventsourcing, partitioning, messaging, cqrs, saga).
	Prefix   string            `yaml:"prefix"`
	Prefixes map[string]string `yaml:"prefixes"`
	// Tables overrides default table names by placeholder, without prefix,
	// e.g. consumers_table: MY_CONSUMERS.
	Tables map[string]string `yaml:"tables"`
	// Modes is the schema switch per area: always (default) or never.
	Modes map[string]string `yaml:"modes"`

	Aggregates  []Aggregate  `yaml:"aggregates"`
	QueryTables []QueryTable `yaml:"query_tables"`
	// SagaTables are extra saga instance tables, taken verbatim.
	SagaTables []string `yaml:"saga_tables"`

	loc locator // where each key is, for errors found after loading
}

// Plugin locates a dialect plugin binary.
type Plugin struct {
	Path   string   `yaml:"path"`   // explicit binary (wins over dialect)
	Dirs   []string `yaml:"dirs"`   // searched first for tidemark-dialect-<name>
	SHA256 string   `yaml:"sha256"` // pins the binary; a mismatch is refused
}

// Aggregate declares an aggregate type.
type Aggregate struct {
	// Type is aggregate_type: "namespace.Name" (the last dot splits them).
	Type string `yaml:"type"`
	// OwnTable gives the aggregate <NAME>_EVENTS and <NAME>_SNAPSHOTS (with
	// the eventsourcing prefix); EventTable/SnapshotTable name them
	// explicitly (no prefix) and imply it.
	OwnTable      bool   `yaml:"own_table"`
	EventTable    string `yaml:"event_table"`
	SnapshotTable string `yaml:"snapshot_table"`
}

// QueryTable declares a projection's query table.
type QueryTable struct {
	Projection string   `yaml:"projection"`
	Table      string   `yaml:"table"` // default: cqrs prefix + projection name
	Columns    []Column `yaml:"columns"`
}

// Column is one declared query column.
type Column struct {
	Name      string `yaml:"name"`
	Kind      string `yaml:"kind"` // text, integer, decimal, date, time, instant, boolean
	Precision int    `yaml:"precision"`
	Scale     int    `yaml:"scale"`
	Unique    bool   `yaml:"unique"`
}

// Secret is a string that never prints: fmt's verbs, %v and %#v included,
// show "[redacted]". Reveal returns the value.
type Secret string

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return `config.Secret("` + s.String() + `")` }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// ErrNoDSN is wrapped when a command needs a database and none is configured.
var ErrNoDSN = errors.New("no DSN configured")

// DSNValue returns the DSN: from the environment variable DSNEnv when set
// (an unset or empty variable is an error naming the variable, never a
// value), else DSN; "" when neither is configured.
func (c *Config) DSNValue() (string, error) {
	if c.DSNEnv != "" {
		v := os.Getenv(c.DSNEnv)
		if v == "" {
			return "", fmt.Errorf("%w: environment variable %s (named by dsn_env) is unset or empty", ErrNoDSN, c.DSNEnv)
		}
		return v, nil
	}
	return c.DSN.Reveal(), nil
}

// AreaPrefix is the prefix of one area: Prefixes[area], else Prefix. The
// publication area takes no prefix.
func (c *Config) AreaPrefix(a dialect.Area) string {
	if a == dialect.AreaPublication {
		return ""
	}
	if p, ok := c.Prefixes[string(a)]; ok {
		return p
	}
	return c.Prefix
}

// prefixedAreas take a prefix.
var prefixedAreas = []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging, dialect.AreaCQRS, dialect.AreaSaga}

// allAreas have a schema switch.
var allAreas = append(append([]dialect.Area{}, prefixedAreas...), dialect.AreaPublication)

// Schema is the naming configuration as schema.Config.
func (c *Config) Schema() schema.Config {
	sc := schema.Config{}
	for _, a := range prefixedAreas {
		if p := c.AreaPrefix(a); p != "" {
			if sc.Prefixes == nil {
				sc.Prefixes = map[dialect.Area]string{}
			}
			sc.Prefixes[a] = p
		}
	}
	if len(c.Tables) > 0 {
		sc.TableNames = make(map[string]string, len(c.Tables))
		for k, v := range c.Tables {
			sc.TableNames[k] = v
		}
	}
	for _, a := range c.Aggregates {
		sc.Aggregates = append(sc.Aggregates, a.schema())
	}
	sc.SagaTables = append(sc.SagaTables, c.SagaTables...)
	return sc
}

func (a Aggregate) schema() schema.Aggregate {
	ns, name := "", a.Type
	if i := strings.LastIndex(a.Type, "."); i >= 0 {
		ns, name = a.Type[:i], a.Type[i+1:]
	}
	return schema.Aggregate{Namespace: ns, Name: name, OwnTable: a.OwnTable, EventTable: a.EventTable, SnapshotTable: a.SnapshotTable}
}

// Queries are the query tables as schema.QueryTable (kinds already checked
// by Validate; an unknown kind is passed through and refused by the schema).
func (c *Config) Queries() []schema.QueryTable {
	var out []schema.QueryTable
	for _, q := range c.QueryTables {
		st := schema.QueryTable{Projection: q.Projection, Table: q.Table}
		for _, col := range q.Columns {
			k, _ := ParseKind(col.Kind)
			st.Fields = append(st.Fields, schema.QueryField{Column: col.Name, Kind: k, Precision: col.Precision, Scale: col.Scale, Unique: col.Unique})
		}
		out = append(out, st)
	}
	return out
}

// EngineConfig is the configuration as engine.Config.
func (c *Config) EngineConfig() engine.Config {
	ec := engine.Config{Names: c.Schema(), QueryTables: c.Queries(), Partitions: c.Partitions}
	for k, v := range c.Modes {
		if ec.Modes == nil {
			ec.Modes = map[dialect.Area]schema.Mode{}
		}
		ec.Modes[dialect.Area(k)] = schema.Mode(v)
	}
	return ec
}

// kinds maps the file's kind names to query-field kinds; the spec's own
// names (NUMBER_DECIMAL, …) are accepted too, in any case.
var kinds = map[string]dialect.QueryFieldKind{
	"text": dialect.KindText, "integer": dialect.KindInteger, "decimal": dialect.KindDecimal,
	"date": dialect.KindDate, "time": dialect.KindTime, "instant": dialect.KindInstant, "boolean": dialect.KindBoolean,
}

// ParseKind reads a column kind.
func ParseKind(s string) (dialect.QueryFieldKind, bool) {
	if k, ok := kinds[strings.ToLower(s)]; ok {
		return k, true
	}
	for _, k := range kinds {
		if strings.EqualFold(string(k), s) {
			return k, true
		}
	}
	return "", false
}
