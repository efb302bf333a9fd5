package dialect_test

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// documentedBinds are the #{…} parameters each statement may use, as
// documented on its StatementID.
var documentedBinds = map[dialect.StatementID][]string{
	dialect.PartitionSeed:       {"partitions"},
	dialect.PartitionRead:       nil,
	dialect.PositionSeed:        nil,
	dialect.PositionAllocate:    {"count"},
	dialect.PositionAllocated:   {"count"},
	dialect.StreamVersion:       {"aggregate_id"},
	dialect.EventStream:         {"aggregate_id", "aggregate_type", "after_sequence"},
	dialect.EventRange:          {"after", "upto", "limit"},
	dialect.EventPartitionRange: {"partition", "after", "upto", "limit"},
	dialect.SnapshotInsert:      {"id", "aggregate_id", "aggregate_type", "sequence_no", "snapshot_version", "payload", "created_at"},
	dialect.SnapshotLatest:      {"aggregate_id", "aggregate_type", "snapshot_version"},
	dialect.HWMSeed:             {"topic"},
	dialect.HWMRead:             {"topic"},
	dialect.HWMAcquire:          {"topic", "owner", "lease_millis"},
	dialect.HWMRelease:          {"topic", "owner"},
	dialect.HWMAdvance:          {"topic", "owner", "mark"},
	dialect.CommittedEnd:        nil,
	dialect.DatabaseNow:         nil,
}

var bindRE = regexp.MustCompile(`#\{([a-z_]+)\}`)

func binds(tmpl string) []string {
	var out []string
	for _, m := range bindRE.FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestANSIHasEveryCounterRowStatement(t *testing.T) {
	c := dialect.ANSI()
	if c.Positions != dialect.CounterRow {
		t.Fatalf("positions %s, want %s", c.Positions, dialect.CounterRow)
	}
	for _, id := range dialect.RequiredStatements(dialect.CounterRow) {
		if strings.TrimSpace(c.Statements[id]) == "" {
			t.Errorf("no %s", id)
		}
	}
	if c.Statements[dialect.PositionAllocated] == "" {
		t.Errorf("no %s: the ANSI counter UPDATE returns no row", dialect.PositionAllocated)
	}
	for id := range c.Statements {
		if sp, ok := dialect.Spec(id); !ok || !sp.For(dialect.CounterRow) {
			t.Errorf("%s is not a COUNTER_ROW statement", id)
		}
	}
}

func TestANSIUsesOnlyDocumentedNames(t *testing.T) {
	c := dialect.ANSI()
	for id, tmpl := range c.Statements {
		allowed := map[string]bool{}
		for _, b := range documentedBinds[id] {
			allowed[b] = true
		}
		if _, listed := documentedBinds[id]; !listed { // an area declared since: its spec
			sp, _ := dialect.Spec(id)
			for _, b := range sp.Binds {
				allowed[b] = true
			}
		}
		for _, b := range binds(tmpl) {
			if !allowed[b] {
				t.Errorf("%s binds #{%s}, not documented for it", id, b)
			}
		}
		for _, p := range dialect.Placeholders(tmpl) {
			if _, ok := dialect.DefaultNames[p]; !ok && p != "position_table" {
				t.Errorf("%s uses unknown ${%s}", id, p)
			}
		}
		// Positions come from the counter of the topic at hand, never a
		// fixed table.
		if strings.Contains(tmpl, "_global_position_table}") {
			t.Errorf("%s names a global position table; use ${position_table}", id)
		}
	}
	ins := c.EventInsert.Head + c.EventInsert.Row + c.EventInsert.Tail
	cols := strings.Split(dialect.EventColumns, ", ")
	if got := binds(c.EventInsert.Row); !reflect.DeepEqual(got, cols) {
		t.Errorf("event insert row binds %v, want the event columns %v", got, cols)
	}
	if !strings.Contains(ins, "("+dialect.EventColumns+")") || c.EventInsert.Tail != "" {
		t.Errorf("event insert: %q (want no tail: a counter insert returns nothing)", ins)
	}
	for _, q := range []string{c.Introspection.TableExists, c.Introspection.Columns} {
		if got := binds(q); !reflect.DeepEqual(got, []string{"table"}) {
			t.Errorf("introspection binds %v, want [table]: %s", got, q)
		}
	}
	if got := binds(c.Introspection.SequenceExists); !reflect.DeepEqual(got, []string{"sequence"}) {
		t.Errorf("sequence_exists binds %v, want [sequence]", got)
	}
	for k, typ := range c.QueryColumns.Types {
		for _, p := range dialect.Placeholders(typ) {
			if k != dialect.KindDecimal || (p != "precision" && p != "scale") {
				t.Errorf("query column type %s: unexpected ${%s}", k, p)
			}
		}
	}
}

func TestANSIIsIncompleteUntilTheAuthorFillsIt(t *testing.T) {
	c := dialect.ANSI()
	// The standard script list, in creation order, without DDL.
	std := dialect.StandardScripts(dialect.ObjectTable)
	if len(c.Scripts) != len(std) {
		t.Fatalf("%d scripts, want %d", len(c.Scripts), len(std))
	}
	for i, sc := range c.Scripts {
		if sc.Name != std[i].Name || sc.Area != std[i].Area || len(sc.Statements) != 0 {
			t.Errorf("script %d: %s/%s with %d statements, want %s/%s with none", i, sc.Area, sc.Name, len(sc.Statements), std[i].Area, std[i].Name)
		}
	}
	err := engine.Validate(&c)
	if err == nil || !strings.Contains(err.Error(), "script "+dialect.ScriptEventStore) {
		t.Errorf("Validate(ANSI()) = %v, want the missing scripts named", err)
	}
	for _, r := range c.Errors {
		if r.Class == dialect.ErrDuplicateEventID {
			t.Errorf("ANSI has a duplicate_event_id rule %+v; it cannot be told apart portably", r)
		}
	}
	if c.Introspection.Indexes != "" {
		t.Errorf("ANSI has an index query; the standard has no index view")
	}
	if _, err := plugin.InProcess(context.Background(), &dialect.Base{Catalogue: c}); err == nil ||
		!strings.Contains(err.Error(), "identity: name: empty") {
		t.Errorf("loading ANSI() without a name: %v, want a missing-name error", err)
	}

	// Filled in, it validates.
	c.Identity.Name = "ansi-test"
	fillForLoad(&c)
	if err := engine.Validate(&c); err != nil {
		t.Errorf("Validate after filling the scripts: %v", err)
	}
}

func TestANSIReturnsAFreshCatalogue(t *testing.T) {
	a := dialect.ANSI()
	a.Statements[dialect.PositionAllocate] = "changed"
	a.Errors[0].SQLState = "XXXXX"
	a.QueryColumns.Types[dialect.KindText] = "TEXT"
	a.Scripts[0].Statements = []string{"changed"}
	b := dialect.ANSI()
	if b.Statements[dialect.PositionAllocate] == "changed" || b.Errors[0].SQLState == "XXXXX" ||
		b.QueryColumns.Types[dialect.KindText] == "TEXT" || len(b.Scripts[0].Statements) != 0 {
		t.Errorf("a change to one ANSI() catalogue shows in the next")
	}
}

func TestBaseDescribesItsCatalogue(t *testing.T) {
	c := dialect.ANSI()
	c.Identity.Name = "base-test"
	c.Statements[dialect.EventRange] = "SELECT 1"
	fillForLoad(&c)
	l, err := plugin.InProcess(context.Background(), &dialect.Base{Catalogue: c})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Catalogue, c) {
		t.Errorf("catalogue changed crossing the boundary:\n got  %+v\n want %+v", l.Catalogue, c)
	}

	// Embedded, Describe is promoted.
	type myDialect struct{ dialect.Base }
	var d dialect.Dialect = &myDialect{dialect.Base{Catalogue: c}}
	resp, err := d.Describe(context.Background(), dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
	if err != nil || resp.Catalogue.Identity.Name != "base-test" {
		t.Errorf("embedded Base: %+v, %v", resp.Catalogue.Identity, err)
	}
}

// fillForLoad fills what ANSI() leaves to the author, so the catalogue
// passes (*Catalogue).Validate: identity, DDL, the index query and a
// duplicate-event-id rule.
func fillForLoad(c *dialect.Catalogue) {
	c.Identity.Version, c.Identity.DriverName, c.Identity.DSNHint = "0.0.1", "testdb", "test://"
	ddl := map[string][]string{}
	for _, s := range dialect.StandardScripts(dialect.ObjectTable) {
		ddl[s.Name] = []string{"CREATE TABLE IF NOT EXISTS x (id INT)"}
	}
	c.Scripts = dialect.Scripts(dialect.ObjectTable, ddl)
	c.Introspection.Indexes = "SELECT 1 WHERE 1 = #{table}"
	c.Errors = append([]dialect.ErrorRule{{Class: dialect.ErrDuplicateEventID, SQLState: "23505", ConstraintPattern: "^pk_"}}, c.Errors...)
}
