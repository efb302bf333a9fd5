package sqlerr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Shapes of real driver errors, reduced to what Extract reads.
type pqLike struct{ Code string } // lib/pq: Code is the SQLSTATE

func (e *pqLike) Error() string {
	return "pq: duplicate key value violates unique constraint \"t_pkey\""
}

type pgxLike struct{ code string } // pgx: SQLState() method

func (e *pgxLike) Error() string    { return "ERROR: deadlock detected (SQLSTATE 40P01)" }
func (e *pgxLike) SQLState() string { return e.code }

type mysqlLike struct { // go-sql-driver/mysql
	Number   uint16
	SQLState [5]byte
	Message  string
}

func (e *mysqlLike) Error() string { return fmt.Sprintf("Error %d: %s", e.Number, e.Message) }

type sqliteLike struct{ code int } // modernc.org/sqlite: Code() int

func (e *sqliteLike) Error() string {
	return "constraint failed: UNIQUE constraint failed: T.id (1555)"
}
func (e *sqliteLike) Code() int { return e.code }

func TestExtract(t *testing.T) {
	cases := []struct {
		err    error
		state  string
		vendor int64
	}{
		{&pqLike{Code: "23505"}, "23505", 0},
		{fmt.Errorf("wrapped: %w", &pgxLike{code: "40P01"}), "40P01", 0},
		{&mysqlLike{Number: 1062, SQLState: [5]byte{'2', '3', '0', '0', '0'}, Message: "Duplicate entry"}, "23000", 1062},
		{&sqliteLike{code: 1555}, "", 1555},
	}
	for _, c := range cases {
		d := Extract(c.err)
		if d.SQLState != c.state || (c.vendor != 0 && (!d.HasVendor || d.VendorCode != c.vendor)) {
			t.Errorf("%T: got %+v, want state %q vendor %d", c.err, d, c.state, c.vendor)
		}
	}
}

func TestClassify(t *testing.T) {
	c, err := NewClassifier([]dialect.ErrorRule{
		{Class: dialect.ErrDuplicateEventID, SQLState: "23505", MessagePattern: `_pkey"`},
		{Class: dialect.ErrUniqueViolation, SQLState: "23505"},
		{Class: dialect.ErrUniqueViolation, VendorCode: 1062},
		{Class: dialect.ErrConnectionLost, SQLState: "08*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{&pqLike{Code: "23505"}, dialect.ErrDuplicateEventID},
		{&pgxLike{code: "23505"}, dialect.ErrUniqueViolation},
		{&mysqlLike{Number: 1062}, dialect.ErrUniqueViolation},
		{&pgxLike{code: "08006"}, dialect.ErrConnectionLost},
		{errors.New("something else"), ""},
		{nil, ""},
	} {
		if got := c.Classify(tc.err); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.err, got, tc.want)
		}
	}
	if _, err := NewClassifier([]dialect.ErrorRule{{Class: "x", MessagePattern: "("}}); err == nil {
		t.Errorf("invalid pattern accepted")
	}
}
