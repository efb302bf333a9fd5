package sqlserver

import (
	"context"
	"strings"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

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

// TestCatalogueComplete checks the catalogue against the core's own check
// and that every statement fills with the spec's names and binds only the
// parameters its StatementID documents. There is no SQL Server here: the
// conformance suite runs the catalogue where one answers.
func TestCatalogueComplete(t *testing.T) {
	r, err := New().Describe(context.Background(), dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Catalogue
	if err := engine.Validate(&c); err != nil {
		t.Fatal(err)
	}
	id := c.Identity
	if id.Name != "sqlserver" || id.DriverName != "sqlserver" || id.Placeholder != dialect.PlaceholderAtP ||
		id.QuoteOpen != "[" || id.QuoteClose != "]" || id.MaxIdentifierLength != 128 || c.Positions != dialect.CounterRow {
		t.Errorf("identity %+v, positions %s", id, c.Positions)
	}
	names := map[string]string{"position_table": "EVENT_STORE_GLOBAL_POSITION"}
	for k, v := range dialect.DefaultNames {
		names[k] = v
	}
	for sid, tmpl := range c.Statements {
		filled, err := dialect.Fill(tmpl, names)
		if err != nil {
			t.Errorf("%s: %v", sid, err)
			continue
		}
		allowed := map[string]bool{}
		for _, b := range append(binds[sid], specBinds(sid)...) {
			allowed[b] = true
		}
		comp := dialect.Compile(filled, id.Placeholder)
		for _, p := range comp.Params {
			if !allowed[p] {
				t.Errorf("%s binds #{%s}, not one of %v", sid, p, binds[sid])
			}
		}
		if strings.Contains(comp.SQL, "?") || strings.Contains(comp.SQL, "#{") {
			t.Errorf("%s: compiled text %q", sid, comp.SQL)
		}
		if strings.Contains(comp.SQL, " LIMIT ") {
			t.Errorf("%s: T-SQL has no LIMIT: %q", sid, comp.SQL)
		}
		if strings.Contains(comp.SQL, "FETCH FIRST") {
			t.Errorf("%s: T-SQL pages with OFFSET … FETCH NEXT, not FETCH FIRST: %q", sid, comp.SQL)
		}
	}
	// The allocation returns the new value itself.
	if c.Statements[dialect.PositionAllocated] != "" || !strings.Contains(c.Statements[dialect.PositionAllocate], "OUTPUT inserted.val") {
		t.Errorf("PositionAllocate must return the counter through OUTPUT: %q", c.Statements[dialect.PositionAllocate])
	}
	if p := dialect.Compile(c.EventInsert.Row, id.Placeholder).Params; strings.Join(p, ",") != strings.Join(rowBinds, ",") {
		t.Errorf("event row binds %v", p)
	}
	// A multi-row insert numbers its parameters @p1, @p2, … across rows.
	tmpl := c.EventInsert.Head + strings.TrimSuffix(strings.Repeat(c.EventInsert.Row+", ", 3), ", ") + c.EventInsert.Tail
	filled, err := dialect.Fill(tmpl, map[string]string{"event_store_table": "EVENT_STORE"})
	if err != nil {
		t.Fatal(err)
	}
	comp := dialect.Compile(filled, id.Placeholder)
	if !strings.Contains(comp.SQL, "(@p1, @p2,") || !strings.HasSuffix(comp.SQL, "@p33)") {
		t.Errorf("three-row insert compiled to %q", comp.SQL)
	}
}

// TestSeedsAreGuarded checks that every seed inserts only a missing row,
// probing it under UPDLOCK, HOLDLOCK.
func TestSeedsAreGuarded(t *testing.T) {
	st := Catalogue().Statements
	for _, sid := range []dialect.StatementID{dialect.PartitionSeed, dialect.PositionSeed, dialect.HWMSeed} {
		if !strings.Contains(st[sid], "WHERE NOT EXISTS (SELECT 1 FROM") || !strings.Contains(st[sid], "WITH (UPDLOCK, HOLDLOCK)") {
			t.Errorf("%s is not a guarded seed: %q", sid, st[sid])
		}
	}
}

// TestErrorRules classifies errors as go-mssqldb returns them.
func TestErrorRules(t *testing.T) {
	cl, err := sqlerr.NewClassifier(Catalogue().Errors)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{mssql.Error{Number: 2627, Message: "Violation of PRIMARY KEY constraint 'PK__account___3213E83F0A9D95DB'. Cannot insert duplicate key in object 'dbo.account_event'. The duplicate key value is (0190)."}, dialect.ErrDuplicateEventID},
		{mssql.Error{Number: 2627, Message: "Violation of UNIQUE KEY constraint 'uq_account_event_sequence'. Cannot insert duplicate key in object 'dbo.account_event'. The duplicate key value is (a-1, 0)."}, dialect.ErrUniqueViolation},
		{mssql.Error{Number: 2601, Message: "Cannot insert duplicate key row in object 'dbo.account_summary' with unique index 'idx_account_summary_iban'."}, dialect.ErrUniqueViolation},
		{mssql.Error{Number: 547, Message: "The INSERT statement conflicted with the FOREIGN KEY constraint \"fk_consumer_checkpoints_consumer\"."}, dialect.ErrForeignKeyViolation},
		{mssql.Error{Number: 547, Message: "The INSERT statement conflicted with the CHECK constraint \"ck_x\"."}, ""},
		{mssql.Error{Number: 1205, Message: "Transaction (Process ID 52) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction."}, dialect.ErrDeadlock},
		{mssql.Error{Number: 1222, Message: "Lock request time out period exceeded."}, dialect.ErrLockTimeout},
		{mssql.Error{Number: 208, Message: "Invalid object name 'account_event'."}, dialect.ErrUndefinedTable},
		{mssql.Error{Number: 102, Message: "Incorrect syntax near 'LIMIT'."}, ""},
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
