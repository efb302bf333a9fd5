package mysql

import (
	"context"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// binds lists, per statement, the #{…} parameters its StatementID documents.
var binds = map[dialect.StatementID][]string{
	dialect.PartitionSeed:       {"partitions"},
	dialect.PositionAllocate:    {"count"},
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
	dialect.HWMAdvance:          {"topic", "owner", "lease_millis", "mark"},
}

var rowBinds = []string{"id", "aggregate_id", "aggregate_type", "sequence_no", "event_type", "event_revision", "payload", "metadata", "occurred_at", "partition_key", "global_position"}

func catalogues(t *testing.T) map[string]dialect.Catalogue {
	t.Helper()
	out := map[string]dialect.Catalogue{}
	for _, d := range []*MySQL{New(), New(MariaDB())} {
		r, err := d.Describe(context.Background(), dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
		if err != nil {
			t.Fatal(err)
		}
		out[d.Flavor().String()] = r.Catalogue
	}
	return out
}

// TestCatalogueComplete checks both flavors against the core's own check,
// their identities, and that every template fills with the spec's names and
// binds only documented parameters.
func TestCatalogueComplete(t *testing.T) {
	for name, c := range catalogues(t) {
		if err := engine.Validate(&c); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if c.Identity.Name != name || c.Identity.DriverName != "mysql" || c.Identity.Placeholder != dialect.PlaceholderQuestion ||
			c.Identity.QuoteOpen != "`" || c.Identity.MaxIdentifierLength != 64 || c.Positions != dialect.CounterRow {
			t.Errorf("%s: identity %+v", name, c.Identity)
		}
		if !strings.Contains(c.Identity.DSNHint, "parseTime=true") || !strings.Contains(c.Identity.DSNHint, "loc=UTC") {
			t.Errorf("%s: DSN hint %q lacks parseTime=true&loc=UTC", name, c.Identity.DSNHint)
		}
		names := map[string]string{"position_table": "EVENT_STORE_GLOBAL_POSITION"}
		for k, v := range dialect.DefaultNames {
			names[k] = v
		}
		for id, tmpl := range c.Statements {
			filled, err := dialect.Fill(tmpl, names)
			if err != nil {
				t.Errorf("%s %s: %v", name, id, err)
				continue
			}
			if strings.Contains(tmpl, "FETCH FIRST") { // MySQL 8 has no FETCH clause
				t.Errorf("%s %s pages with FETCH FIRST, not LIMIT: %q", name, id, tmpl)
			}
			allowed := map[string]bool{}
			for _, b := range append(binds[id], specBinds(id)...) {
				allowed[b] = true
			}
			for _, p := range dialect.Compile(filled, c.Identity.Placeholder).Params {
				if !allowed[p] {
					t.Errorf("%s %s binds #{%s}, not one of %v", name, id, p, binds[id])
				}
			}
		}
		ins := c.EventInsert
		if p := dialect.Compile(ins.Row, c.Identity.Placeholder).Params; strings.Join(p, ",") != strings.Join(rowBinds, ",") {
			t.Errorf("%s: event row binds %v", name, p)
		}
		if c.Statements[dialect.PositionAllocated] == "" {
			t.Errorf("%s: the allocation returns no row, PositionAllocated is needed", name)
		}
	}
}

// TestErrorRules classifies the errors the driver returns.
func TestErrorRules(t *testing.T) {
	c := Catalogue(FlavorMySQL)
	cl, err := sqlerr.NewClassifier(c.Errors)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry '0190-x' for key 'PRIMARY'"}, dialect.ErrDuplicateEventID},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry '0190-x' for key 'account_event.PRIMARY'"}, dialect.ErrDuplicateEventID},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'a-1' for key 'uq_account_event_aggregate_sequence'"}, dialect.ErrUniqueViolation},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'PRIMARY' for key 'account_event.uq_account_event_aggregate_sequence'"}, dialect.ErrUniqueViolation},
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found"}, dialect.ErrDeadlock},
		{&mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}, dialect.ErrLockTimeout},
		{&mysql.MySQLError{Number: 1146, Message: "Table 'db.x' doesn't exist"}, dialect.ErrUndefinedTable},
		{&mysql.MySQLError{Number: 1452, Message: "Cannot add or update a child row"}, dialect.ErrForeignKeyViolation},
		{&mysql.MySQLError{Number: 1317, Message: "Query execution was interrupted"}, dialect.ErrQueryCanceled},
		{mysql.ErrInvalidConn, dialect.ErrConnectionLost},
		{&mysql.MySQLError{Number: 1064, Message: "syntax"}, ""},
	} {
		if got := cl.Classify(tc.err); got != tc.want {
			t.Errorf("%v: class %q, want %q", tc.err, got, tc.want)
		}
	}
}

// specBinds are the binds of a statement the list above does not name (an
// area declared since, e.g. consumers), as its StatementSpec declares them.
func specBinds(id dialect.StatementID) []string {
	if _, listed := binds[id]; listed {
		return nil
	}
	sp, _ := dialect.Spec(id)
	return sp.Binds
}
