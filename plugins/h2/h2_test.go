package h2

import (
	"errors"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
	"github.com/tidemarkdb/tidemark/plugins/internal/enginetest"
)

func TestCatalogueValid(t *testing.T) {
	c := Catalogue()
	if err := engine.Validate(&c); err != nil {
		t.Fatal(err)
	}
	if c.Statements[dialect.PositionAllocated] != "" {
		t.Error("position.allocate returns the value; position.allocated must be empty")
	}
}

// TestErrorRulesOnMessages classifies messages as H2 2.1.214 words them
// (copied from real errors), including the SQL text H2 appends.
func TestErrorRulesOnMessages(t *testing.T) {
	enginetest.ClassifyMessages(t, Catalogue(), []enginetest.MessageCase{
		{Err: &jdbcbridge.Error{State: "23505", Code: 23505, Message: `Unique index or primary key violation: "PUBLIC.PRIMARY_KEY_4 ON PUBLIC.E(ID) VALUES ( /* 3 */ UUID '0190a0a0-0000-7000-8000-000000000000' )"; SQL statement:
INSERT INTO E VALUES (?, 'x') [23505-214]`}, Want: dialect.ErrDuplicateEventID},
		{Err: &jdbcbridge.Error{State: "23505", Code: 23505, Message: `Unique index or primary key violation: "PRIMARY KEY ON PUBLIC.P(ID) ( /* key:1 */ CAST(1 AS TINYINT), CAST(0 AS BIGINT))"; SQL statement:
MERGE INTO P t USING (VALUES (1, 0)) AS s (id, val) ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val) [23505-214]`}, Want: dialect.ErrDuplicateEventID},
		{Err: &jdbcbridge.Error{State: "23505", Code: 23505, Message: `Unique index or primary key violation: "PUBLIC.CONSTRAINT_INDEX_5 ON PUBLIC.EVENT_STORE(AGGREGATE_ID NULLS FIRST, SEQUENCE_NO NULLS FIRST) VALUES ( /* key:1 */ 'PRIMARY_KEY_1 ON ', CAST(1 AS BIGINT))"; SQL statement:
INSERT INTO EVENT_STORE (id) VALUES (?) -- PRIMARY_KEY_1 ON [23505-214]`}, Want: dialect.ErrUniqueViolation},
		{Err: &jdbcbridge.Error{State: "HYT00", Code: 50200, Message: `Timeout trying to lock table "EVENT_STORE_GLOBAL_POSITION"`}, Want: dialect.ErrLockTimeout},
		{Err: &jdbcbridge.Error{State: "40001", Code: 40001, Message: `Deadlock detected`}, Want: dialect.ErrDeadlock},
		{Err: &jdbcbridge.Error{State: "42S02", Code: 42102, Message: `Table "NOPE" not found`}, Want: dialect.ErrUndefinedTable},
		{Err: &jdbcbridge.Error{State: "08006", Code: 0, Message: `connection reset`}, Want: dialect.ErrConnectionLost},
		{Err: errors.New("something else"), Want: ""},
	})
}
