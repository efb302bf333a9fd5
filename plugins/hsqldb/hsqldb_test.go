package hsqldb

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
	if c.Statements[dialect.PositionAllocated] == "" {
		t.Error("position.allocate is an UPDATE; position.allocated must read the value back")
	}
	if c.Locks.ForUpdate != "" || c.Locks.SkipLocked {
		t.Error("FOR UPDATE does not lock against FOR UPDATE in MVCC mode; it must not be offered")
	}
}

// TestErrorRulesOnMessages classifies messages as HSQLDB 2.7.1 words them
// (copied from real errors).
func TestErrorRulesOnMessages(t *testing.T) {
	enginetest.ClassifyMessages(t, Catalogue(), []enginetest.MessageCase{
		{Err: &jdbcbridge.Error{State: "23505", Code: -104, Message: `integrity constraint violation: unique constraint or index violation ; SYS_PK_10098 table: EVENT_STORE`}, Want: dialect.ErrDuplicateEventID},
		{Err: &jdbcbridge.Error{State: "23505", Code: -104, Message: `integrity constraint violation: unique constraint or index violation ; SYS_CT_10101 table: EVENT_STORE`}, Want: dialect.ErrUniqueViolation},
		{Err: &jdbcbridge.Error{State: "23503", Code: -177, Message: `integrity constraint violation: foreign key no parent`}, Want: dialect.ErrForeignKeyViolation},
		{Err: &jdbcbridge.Error{State: "40001", Code: -4861, Message: `transaction rollback: serialization failure`}, Want: dialect.ErrSerializationFailure},
		{Err: &jdbcbridge.Error{State: "42501", Code: -5501, Message: `user lacks privilege or object not found: NOPE`}, Want: dialect.ErrUndefinedTable},
		{Err: &jdbcbridge.Error{State: "08003", Code: -1303, Message: `connection is closed`}, Want: dialect.ErrConnectionLost},
		{Err: errors.New("something else"), Want: ""},
	})
}
