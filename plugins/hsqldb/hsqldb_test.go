package hsqldb

import (
	"errors"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
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
	cl, err := sqlerr.NewClassifier(Catalogue().Errors)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		err  error
		want dialect.ErrorClass
	}{
		{&jdbcbridge.Error{State: "23505", Code: -104, Message: `integrity constraint violation: unique constraint or index violation ; SYS_PK_10098 table: EVENT_STORE`}, dialect.ErrDuplicateEventID},
		{&jdbcbridge.Error{State: "23505", Code: -104, Message: `integrity constraint violation: unique constraint or index violation ; SYS_CT_10101 table: EVENT_STORE`}, dialect.ErrUniqueViolation},
		{&jdbcbridge.Error{State: "23503", Code: -177, Message: `integrity constraint violation: foreign key no parent`}, dialect.ErrForeignKeyViolation},
		{&jdbcbridge.Error{State: "40001", Code: -4861, Message: `transaction rollback: serialization failure`}, dialect.ErrSerializationFailure},
		{&jdbcbridge.Error{State: "42501", Code: -5501, Message: `user lacks privilege or object not found: NOPE`}, dialect.ErrUndefinedTable},
		{&jdbcbridge.Error{State: "08003", Code: -1303, Message: `connection is closed`}, dialect.ErrConnectionLost},
		{errors.New("something else"), ""},
	}
	for _, c := range cases {
		if got := cl.Classify(c.err); got != c.want {
			t.Errorf("%q: %q, want %q", c.err, got, c.want)
		}
	}
}
