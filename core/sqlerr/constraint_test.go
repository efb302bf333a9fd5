package sqlerr_test

import (
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// stateErr carries a SQLSTATE and a message only, like a driver of an engine
// whose message shape the built-in shapes do not know (Derby's "…defined on
// 'T'. The statement was aborted because it would have caused a duplicate
// key value in a unique or primary key constraint or unique index
// identified by 'SQL0000000001-…' defined on 'T'.").
type stateErr struct{ state, msg string }

func (e stateErr) Error() string    { return e.msg }
func (e stateErr) SQLState() string { return e.state }

// namedErr also carries the constraint in a field of its own.
type namedErr struct {
	stateErr
	name string
}

func (e namedErr) ConstraintName() string { return e.name }

// A dialect declares how its engine's message names the constraint; without
// the declaration the rule cannot see the name, with it the rule matches
// the name (and only the name: the same words elsewhere in the message do
// not count), and a name from the driver's own field still wins.
func TestDeclaredConstraintShape(t *testing.T) {
	derby := stateErr{"23505", "The statement was aborted because it would have caused a duplicate key value in a unique or primary key constraint or unique index identified by 'PK_EVENTS' defined on 'EVENTS'."}
	other := stateErr{"23505", "The statement was aborted because it would have caused a duplicate key value in a unique or primary key constraint or unique index identified by 'UQ_SEQ' defined on 'PK_EVENTS'."}
	rule := dialect.ErrorRule{Class: dialect.ErrDuplicateEventID, SQLState: "23505", ConstraintPattern: "^PK_"}
	fallback := dialect.ErrorRule{Class: dialect.ErrUniqueViolation, SQLState: "23505"}

	without, err := sqlerr.NewClassifier([]dialect.ErrorRule{rule, fallback})
	if err != nil {
		t.Fatal(err)
	}
	if got := without.Classify(derby); got != dialect.ErrUniqueViolation {
		t.Errorf("undeclared shape: %q, want the fallback %q (the built-in shapes do not know this message)", got, dialect.ErrUniqueViolation)
	}

	rule.ConstraintFromMessage = `identified by '([^']+)'`
	with, err := sqlerr.NewClassifier([]dialect.ErrorRule{rule, fallback})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want dialect.ErrorClass
	}{
		{"declared shape finds the primary key", derby, dialect.ErrDuplicateEventID},
		{"the key's name elsewhere in the message does not count", other, dialect.ErrUniqueViolation},
		{"the driver's field wins over the shape", namedErr{derby, "UQ_OTHER"}, dialect.ErrUniqueViolation},
	} {
		if got := with.Classify(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}

	for _, bad := range []string{"(", "no group", "(two)(groups)"} {
		r := rule
		r.ConstraintFromMessage = bad
		if _, err := sqlerr.NewClassifier([]dialect.ErrorRule{r}); err == nil {
			t.Errorf("constraint-from-message %q accepted", bad)
		}
	}
}
