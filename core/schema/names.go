// Package schema names every table of the spec, validates each name before
// it reaches SQL, and creates, verifies and exports the schema with a
// dialect's scripts.
package schema

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// identifierPattern is the one shape every table name must have: a regular
// identifier on every engine, so a letter first (HSQLDB and Firebird, as
// the SQL standard, refuse a leading underscore or digit unquoted).
var identifierPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

// ErrInvalidIdentifier is wrapped by every refused table name.
var ErrInvalidIdentifier = errors.New("invalid identifier")

// InvalidNameError says which name was refused and why.
type InvalidNameError struct {
	Name   string // the refused name
	Source string // where it came from, e.g. "table prefix of area messaging"
	Reason string
}

func (e *InvalidNameError) Error() string {
	return fmt.Sprintf("invalid table name %q (%s): %s", e.Name, e.Source, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidIdentifier) hold.
func (e *InvalidNameError) Unwrap() error { return ErrInvalidIdentifier }

// ValidateIdentifier checks a table name against ^[A-Za-z][A-Za-z0-9_]{0,62}$.
func ValidateIdentifier(name, source string) error {
	if identifierPattern.MatchString(name) {
		return nil
	}
	reason := "must match ^[A-Za-z][A-Za-z0-9_]{0,62}$"
	switch {
	case len(name) > 63:
		reason = fmt.Sprintf("is %d characters long, the limit is 63", len(name))
	case name != "" && (name[0] < 'A' || name[0] > 'Z') && (name[0] < 'a' || name[0] > 'z'):
		reason = fmt.Sprintf("must begin with a letter (an unquoted identifier on every engine), not %q; %s", name[:1], reason)
	}
	return &InvalidNameError{Name: name, Source: source, Reason: reason}
}

// ScreamingSnake converts an aggregate or saga name to SCREAMING_SNAKE_CASE:
// BankAccount → BANK_ACCOUNT, HTTPServer → HTTP_SERVER, order-line → ORDER_LINE.
func ScreamingSnake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r):
			if i > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					b.WriteByte('_')
				}
			}
			b.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteByte('_')
		}
	}
	return strings.Trim(regexp.MustCompile(`_+`).ReplaceAllString(b.String(), "_"), "_")
}

// QueryTableName derives a query table's name from a projection name: every
// character other than an ASCII letter, a digit or _ becomes _.
func QueryTableName(projection string) string {
	var b strings.Builder
	for _, r := range projection {
		if r < 128 && (r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Aggregate declares an event-sourced aggregate type (the Go form of
// @Aggregate, @EventSourced and @EventTable).
type Aggregate struct {
	// Namespace and Name give aggregate_type "namespace.Name".
	Namespace string
	Name      string
	// OwnTable routes the aggregate to its own tables: <NAME>_EVENTS and
	// <NAME>_SNAPSHOTS, with the event-sourcing prefix before each derived
	// name. EventTable and SnapshotTable, when set, name them explicitly
	// (no prefix) and imply OwnTable. Several aggregates may name the same
	// table; aggregate_type tells their rows apart.
	OwnTable      bool
	EventTable    string
	SnapshotTable string
}

// Type is the aggregate_type stored with each event.
func (a Aggregate) Type() string {
	if a.Namespace == "" {
		return a.Name
	}
	return a.Namespace + "." + a.Name
}

// Config names the tables.
type Config struct {
	// Prefixes per area, e.g. {messaging: "ACME_"}. The publication area
	// takes no prefix.
	Prefixes map[dialect.Area]string
	// TableNames overrides default names by placeholder (without prefix),
	// e.g. {"consumers_table": "MY_CONSUMERS"}.
	TableNames map[string]string
	// Aggregates to create event and snapshot tables for.
	Aggregates []Aggregate
	// SagaTables lists extra saga instance tables, taken verbatim (a saga
	// names one with saga.WithTable).
	SagaTables []string
	// Sagas declares sagas' own tables (the Go form of @SagaTable), derived
	// from the saga type with the saga prefix or named explicitly; saga.Open
	// finds a declared saga's table here.
	Sagas []Saga
}

// Names holds every resolved, validated table name.
type Names struct {
	// Shared maps each shared placeholder to its full name.
	Shared map[string]string
	// EventTables and SnapshotTables are the distinct per-aggregate tables
	// (shared ones included when an aggregate uses them), sorted.
	EventTables    []string
	SnapshotTables []string
	// SagaTables are the distinct saga instance tables.
	SagaTables []string
	// ByAggregate maps aggregate_type to its tables.
	ByAggregate map[string]AggregateTables
	// BySaga maps each declared saga type to its instance table.
	BySaga map[string]string
}

// AggregateTables are the tables of one aggregate type.
type AggregateTables struct {
	Events    string
	Snapshots string
}

// Resolve computes and validates every name of cfg.
func Resolve(cfg Config) (*Names, error) {
	n := &Names{Shared: map[string]string{}, ByAggregate: map[string]AggregateTables{}, BySaga: map[string]string{}}
	if err := resolveShared(cfg, n); err != nil {
		return nil, err
	}
	// The shared tables always exist, so an aggregate declared later (or a
	// reader that declares none) finds them.
	events := map[string]bool{n.Shared["event_store_table"]: true}
	snaps := map[string]bool{n.Shared["aggregate_snapshots_table"]: true}
	esPrefix := cfg.Prefixes[dialect.AreaEventSourcing]
	for _, a := range cfg.Aggregates {
		if a.Name == "" {
			return nil, errors.New("aggregate declared without a name")
		}
		t, err := aggregateTables(a, n, esPrefix)
		if err != nil {
			return nil, err
		}
		if prev, dup := n.ByAggregate[a.Type()]; dup && prev != t {
			return nil, fmt.Errorf("aggregate type %s declared twice with different tables", a.Type())
		}
		n.ByAggregate[a.Type()] = t
		events[t.Events], snaps[t.Snapshots] = true, true
	}
	sagas := map[string]bool{n.Shared["saga_instances_table"]: true}
	for _, s := range cfg.SagaTables {
		if err := ValidateIdentifier(s, "saga table"); err != nil {
			return nil, err
		}
		sagas[s] = true
	}
	others := map[string]bool{}
	for t := range events {
		others[t] = true
	}
	for t := range snaps {
		others[t] = true
	}
	if err := resolveSagas(cfg, n, sagas, others); err != nil {
		return nil, err
	}
	n.EventTables, n.SnapshotTables, n.SagaTables = sorted(events), sorted(snaps), sorted(sagas)
	return n, nil
}

// resolveShared validates the prefixes and names every shared table: its
// override or default, behind its area's prefix.
func resolveShared(cfg Config, n *Names) error {
	for area, p := range cfg.Prefixes {
		if p == "" {
			continue
		}
		if err := ValidateIdentifier(p, "table prefix of area "+string(area)); err != nil {
			return err
		}
	}
	for ph, def := range dialect.DefaultNames {
		name := def
		if o, ok := cfg.TableNames[ph]; ok && o != "" {
			name = o
		}
		area := dialect.PlaceholderArea[ph]
		if area != dialect.AreaPublication {
			name = cfg.Prefixes[area] + name
		}
		if err := ValidateIdentifier(name, "${"+ph+"}"); err != nil {
			return err
		}
		n.Shared[ph] = name
	}
	for k := range cfg.TableNames {
		if _, ok := dialect.DefaultNames[k]; !ok {
			return fmt.Errorf("table name override for unknown placeholder %q", k)
		}
	}
	return nil
}

// aggregateTables names an aggregate's tables: the shared ones, or its own
// (derived from its name behind the event-sourcing prefix, or set).
func aggregateTables(a Aggregate, n *Names, esPrefix string) (AggregateTables, error) {
	t := AggregateTables{Events: n.Shared["event_store_table"], Snapshots: n.Shared["aggregate_snapshots_table"]}
	if a.OwnTable || a.EventTable != "" || a.SnapshotTable != "" {
		base := ScreamingSnake(a.Name)
		if base == "" && (a.EventTable == "" || a.SnapshotTable == "") {
			return t, &InvalidNameError{Name: a.Name, Source: "aggregate " + a.Type(),
				Reason: "has no letter or digit to derive its own tables' names from; rename it or set event_table and snapshot_table"}
		}
		t.Events, t.Snapshots = esPrefix+base+"_EVENTS", esPrefix+base+"_SNAPSHOTS"
		if a.EventTable != "" {
			t.Events = a.EventTable
		}
		if a.SnapshotTable != "" {
			t.Snapshots = a.SnapshotTable
		}
	}
	src := "aggregate " + a.Type()
	if err := ValidateIdentifier(t.Events, src+" event table"); err != nil {
		return t, err
	}
	if err := ValidateIdentifier(t.Snapshots, src+" snapshot table"); err != nil {
		return t, err
	}
	return t, nil
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
