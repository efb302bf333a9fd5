package dialect_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/internal/fixture"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
)

// TestValidateRefusesAtLoad: a catalogue with a misspelt bind, an unknown
// ${table}, a missing statement, an unknown statement or a lock form
// without its statement is refused by Load (here InProcess, the same
// path), with a typed error naming the statement and the name.
func TestValidateRefusesAtLoad(t *testing.T) {
	tests := []struct {
		name      string
		change    func(c *dialect.Catalogue)
		statement string
		what      string // the name the problem must carry ("" for the whole statement)
	}{
		{"misspelt bind", func(c *dialect.Catalogue) {
			c.Statements[dialect.HWMRelease] = `UPDATE ${high_water_mark_store_table} SET lease_owner = NULL WHERE topic_name = #{topic} AND lease_owner = #{ownr}`
		}, "hwm.release", "#{ownr}"},
		{"unknown table", func(c *dialect.Catalogue) {
			c.Statements[dialect.PartitionRead] = `SELECT partitions FROM ${partition_metadata} WHERE id = 1`
		}, "partition.read", "${partition_metadata}"},
		{"table of another area", func(c *dialect.Catalogue) {
			c.Statements[dialect.StreamVersion] = `SELECT sequence_no, aggregate_type FROM ${consumers_table} WHERE aggregate_id = #{aggregate_id}`
		}, "event.stream_version", "${consumers_table}"},
		{"missing statement", func(c *dialect.Catalogue) {
			delete(c.Statements, dialect.HWMAdvance)
		}, "hwm.advance", ""},
		{"empty statement", func(c *dialect.Catalogue) {
			c.Statements[dialect.EventRange] = "  "
		}, "event.range", ""},
		{"unknown statement", func(c *dialect.Catalogue) {
			c.Statements["hwm.advnce"] = "SELECT 1"
		}, "hwm.advnce", ""},
		{"misspelt bind in the event insert", func(c *dialect.Catalogue) {
			c.EventInsert.Row = strings.Replace(c.EventInsert.Row, "#{payload}", "#{paylod}", 1)
		}, "event_insert", "#{paylod}"},
		{"computed tail without next sequence", func(c *dialect.Catalogue) {
			c.EventInsert.ComputedTail = ` RETURNING global_position, sequence_no`
		}, "event_insert", "computed_tail"},
		{"misspelt bind in the computed tail", func(c *dialect.Catalogue) {
			c.EventInsert.NextSequence = `(SELECT COALESCE(MAX(sequence_no), -1) FROM ${event_store_table} WHERE aggregate_id = #{aggregate_id} AND aggregate_type = #{aggregate_type}) + #{sequence_offset}`
			c.EventInsert.ComputedTail = ` RETURNING global_position, sequence_no + #{sequnce}`
		}, "event_insert.computed_tail", "#{sequnce}"},
		{"bind in introspection", func(c *dialect.Catalogue) {
			c.Introspection.Columns = "SELECT 1 FROM t WHERE name = #{tabel}"
		}, "introspection.columns", "#{tabel}"},
		{"locking engine reading a conflict on the pool", func(c *dialect.Catalogue) {
			c.Locks.ReadersWaitForWriters = true
		}, "locks.conflict_read", ""},
		{"unknown conflict read", func(c *dialect.Catalogue) {
			c.Locks.ConflictRead = "elsewhere"
		}, "locks.conflict_read", "elsewhere"},
		{"lock form without its statement", func(c *dialect.Catalogue) {
			c.PositionSettings.CounterLock = dialect.CounterLockFirst
		}, "position.lock", ""},
		{"unknown lock form", func(c *dialect.Catalogue) {
			c.PositionSettings.CounterLock = "lock_later"
		}, "position_settings", "counter_lock"},
		{"unknown isolation", func(c *dialect.Catalogue) {
			c.Isolation.HWM = "chaos"
		}, "isolation", "hwm"},
		{"time digits out of range", func(c *dialect.Catalogue) {
			c.Facts.TimeDigits = dialect.Digits(12)
		}, "facts", "time_digits"},
		{"negative max rows", func(c *dialect.Catalogue) {
			c.EventInsert.MaxRows = -1
		}, "event_insert", "max_rows"},
		{"counter insert without a position", func(c *dialect.Catalogue) {
			c.EventInsert.Row = strings.Replace(c.EventInsert.Row, ", #{global_position}", "", 1)
			c.EventInsert.Head = strings.Replace(c.EventInsert.Head, ", global_position", "", 1)
		}, "event_insert", "#{global_position}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixture.Catalogue()
			tt.change(&c)
			_, err := plugin.InProcess(context.Background(), &dialect.Base{Catalogue: c})
			var ce *dialect.CatalogueError
			if !errors.As(err, &ce) || !errors.Is(err, dialect.ErrCatalogue) {
				t.Fatalf("loaded: %v, want a *CatalogueError", err)
			}
			if len(ce.Problems) != 1 {
				t.Errorf("problems %v, want exactly one", ce.Problems)
			}
			p := ce.Problems[0]
			if p.Statement != tt.statement || p.Name != tt.what {
				t.Errorf("problem %+v, want statement %q name %q", p, tt.statement, tt.what)
			}
			if !strings.Contains(err.Error(), tt.statement) || !strings.Contains(err.Error(), tt.what) {
				t.Errorf("message %q does not name %s %s", err, tt.statement, tt.what)
			}
		})
	}
}

// TestValidateAcceptsTheFixtureAndOwnStatements: the fixture is complete,
// and a statement under the dialect's own name is its business.
func TestValidateAcceptsTheFixtureAndOwnStatements(t *testing.T) {
	c := fixture.Catalogue()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Statements[dialect.StatementID(fixture.Name+".probe")] = "SELECT #{anything} FROM ${whatever}"
	c.PositionSettings.CounterLock = dialect.CounterLockFirst
	c.Statements[dialect.PositionLock] = "UPDATE ${position_table} SET val = val WHERE id = 1"
	c.Isolation = dialect.Isolation{Append: dialect.IsolationReadCommitted, HWM: dialect.IsolationSerializable, Read: dialect.IsolationSnapshot}
	c.EventInsert.MaxRows = 1
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestRequiredStatementsDerivedFromSpecs: the required list is the specs'
// non-optional statements of the strategy, nothing of the other one.
func TestRequiredStatementsDerivedFromSpecs(t *testing.T) {
	counter := dialect.RequiredStatements(dialect.CounterRow)
	seq := dialect.RequiredStatements(dialect.SequenceXIDHorizon)
	has := func(ids []dialect.StatementID, id dialect.StatementID) bool {
		for _, x := range ids {
			if x == id {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		ids  []dialect.StatementID
		id   dialect.StatementID
		want bool
	}{
		{counter, dialect.PositionAllocate, true}, {counter, dialect.PositionSeed, true},
		{counter, dialect.PositionCacheSize, false}, {counter, dialect.PositionAllocated, false},
		{counter, dialect.PositionLock, false}, {counter, dialect.HWMNotify, false},
		{seq, dialect.PositionCacheSize, true}, {seq, dialect.CurrentXID, true},
		{seq, dialect.PositionAllocate, false}, {seq, dialect.HWMAdvance, true},
	} {
		if has(c.ids, c.id) != c.want {
			t.Errorf("%s required: %v, want %v", c.id, !c.want, c.want)
		}
	}
	for _, sp := range dialect.Specs() {
		if sp.ID == "" || strings.ToLower(string(sp.ID)) != string(sp.ID) {
			t.Errorf("spec %+v: IDs are lower case", sp)
		}
	}
}
