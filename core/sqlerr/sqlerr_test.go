package sqlerr_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lib/pq"
	mssql "github.com/microsoft/go-mssqldb"
	"modernc.org/sqlite"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

// fbError has the shape of nakagami/firebirdsql's *FbError (a status
// vector of GDS codes, a SQLCODE and a SQLSTATE); that driver is not a
// dependency of this module, so the shape is reproduced here.
type fbError struct {
	GDSCodes []int
	SQLCode  int32
	SQLState string
	Params   [][]string
	Message  string
}

func (e *fbError) Error() string { return e.Message }

// vendorOnly implements only the documented interface.
type vendorOnly struct{ code int64 }

func (e vendorOnly) Error() string        { return "vendor error" }
func (e vendorOnly) VendorCode() int64    { return e.code }
func (e vendorOnly) SQLState() string     { return "HY000" }
func (vendorOnly) ConstraintName() string { return "my_constraint" }

func mysqlErr(n uint16, state, msg string) *mysql.MySQLError {
	e := &mysql.MySQLError{Number: n, Message: msg}
	copy(e.SQLState[:], state)
	return e
}

// sqliteErrors provokes real errors on an in-memory SQLite database.
func sqliteErrors(t *testing.T) (unique, primary, notNull, foreignKey error) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:errs?mode=memory&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`CREATE TABLE p (id TEXT PRIMARY KEY, v INTEGER NOT NULL, UNIQUE (v))`,
		`CREATE TABLE c (id INTEGER PRIMARY KEY, p TEXT REFERENCES p (id))`,
		`INSERT INTO p VALUES ('a', 1)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	_, unique = db.Exec(`INSERT INTO p VALUES ('b', 1)`)
	_, primary = db.Exec(`INSERT INTO p VALUES ('a', 2)`)
	_, notNull = db.Exec(`INSERT INTO p VALUES ('c', NULL)`)
	_, foreignKey = db.Exec(`INSERT INTO c VALUES (1, 'zz')`)
	return
}

func TestExtractFromRealDriverErrors(t *testing.T) {
	sqUnique, sqPrimary, sqNotNull, sqFK := sqliteErrors(t)
	cases := []struct {
		name       string
		err        error
		state      string
		codes      []int64
		constraint string
	}{
		{"pgconn", &pgconn.PgError{Code: "23505", Message: `duplicate key value violates unique constraint "event_store_pkey"`, ConstraintName: "event_store_pkey"}, "23505", nil, "event_store_pkey"},
		{"pgconn without constraint field", &pgconn.PgError{Code: "23503", Message: `insert or update on table "c" violates foreign key constraint "fk_c_p"`}, "23503", nil, "fk_c_p"},
		{"lib/pq", &pq.Error{Code: "23505", Message: `duplicate key value violates unique constraint "t_v_key"`, Constraint: "t_v_key"}, "23505", nil, "t_v_key"},
		{"lib/pq wrapped", fmt.Errorf("saving: %w", &pq.Error{Code: "40P01", Message: "deadlock detected"}), "40P01", nil, ""},
		{"mysql dup", mysqlErr(1062, "23000", "Duplicate entry '0190-x' for key 'account_event.PRIMARY'"), "23000", []int64{1062}, "account_event.PRIMARY"},
		{"mysql fk", mysqlErr(1452, "23000", "Cannot add or update a child row: a foreign key constraint fails (`db`.`CONSUMER_CHECKPOINTS`, CONSTRAINT `fk_consumer_checkpoints_consumer` FOREIGN KEY (`consumer_id`) REFERENCES `CONSUMERS` (`id`))"), "23000", []int64{1452}, "fk_consumer_checkpoints_consumer"},
		{"mysql read-only", mysqlErr(1792, "25006", "Cannot execute statement in a READ ONLY transaction"), "25006", []int64{1792}, ""},
		{"mssql pk", mssql.Error{Number: 2627, State: 1, Class: 14, Message: "Violation of PRIMARY KEY constraint 'PK__account___3213E83F0A9D95DB'. Cannot insert duplicate key in object 'dbo.account_event'. The duplicate key value is (0190).", LineNo: 1}, "", []int64{2627}, "PK__account___3213E83F0A9D95DB"},
		{"mssql unique index", mssql.Error{Number: 2601, Message: "Cannot insert duplicate key row in object 'dbo.t' with unique index 'idx_t_v'. The duplicate key value is (1)."}, "", []int64{2601}, "idx_t_v"},
		{"mssql fk", mssql.Error{Number: 547, Message: `The INSERT statement conflicted with the FOREIGN KEY constraint "fk_c_p". The conflict occurred in database "d", table "dbo.p", column 'id'.`}, "", []int64{547}, "fk_c_p"},
		{"sqlite unique", sqUnique, "", []int64{2067}, "p.v"},
		{"sqlite primary key", sqPrimary, "", []int64{1555}, "p.id"},
		{"sqlite not null", sqNotNull, "", []int64{1299}, "p.v"},
		{"sqlite foreign key", sqFK, "", []int64{787}, ""},
		{"jdbcbridge h2", &jdbcbridge.Error{State: "23505", Code: 23505, Message: `Unique index or primary key violation: "PUBLIC.CONSTRAINT_INDEX_5 ON PUBLIC.EVENT_STORE(AGGREGATE_ID NULLS FIRST) VALUES ( /* key:1 */ 'PRIMARY_KEY_1 ON ')"; SQL statement:
INSERT INTO EVENT_STORE (id) VALUES (?) [23505-214]`}, "23505", []int64{23505}, "PUBLIC.CONSTRAINT_INDEX_5"},
		{"jdbcbridge h2 pk", &jdbcbridge.Error{State: "23505", Code: 23505, Message: `Unique index or primary key violation: "PRIMARY KEY ON PUBLIC.P(ID) ( /* key:1 */ 1)"`}, "23505", []int64{23505}, "PRIMARY KEY"},
		{"jdbcbridge h2 fk", &jdbcbridge.Error{State: "23506", Code: 23506, Message: `Referential integrity constraint violation: "FK_CONSUMER_CHECKPOINTS_CONSUMER: PUBLIC.CONSUMER_CHECKPOINTS FOREIGN KEY(CONSUMER_ID) REFERENCES PUBLIC.CONSUMERS(ID) ('x')"`}, "23506", []int64{23506}, "FK_CONSUMER_CHECKPOINTS_CONSUMER"},
		{"jdbcbridge hsqldb", &jdbcbridge.Error{State: "23505", Code: -104, Message: `integrity constraint violation: unique constraint or index violation ; SYS_PK_10098 table: EVENT_STORE`}, "23505", []int64{-104}, "SYS_PK_10098"},
		{"jdbcbridge hsqldb fk", &jdbcbridge.Error{State: "23503", Code: -177, Message: `integrity constraint violation: foreign key no parent ; FK_CONSUMER_CHECKPOINTS_CONSUMER table: CONSUMER_CHECKPOINTS`}, "23503", []int64{-177}, "FK_CONSUMER_CHECKPOINTS_CONSUMER"},
		{"firebird status vector", &fbError{GDSCodes: []int{335544336, 335544878}, SQLCode: -913, SQLState: "40001", Message: "deadlock; update conflicts with concurrent update"}, "40001", []int64{335544336, 335544878, -913}, ""},
		{"firebird constraint", &fbError{GDSCodes: []int{335544665}, SQLCode: -803, SQLState: "23000", Message: `violation of PRIMARY or UNIQUE KEY constraint "INTEG_5" on table "T"`}, "23000", []int64{335544665, -803}, "INTEG_5"},
		{"documented interface", vendorOnly{code: 4242}, "HY000", []int64{4242}, "my_constraint"},
		{"joined", errors.Join(errors.New("rollback failed"), mysqlErr(1213, "40001", "Deadlock found when trying to get lock")), "40001", []int64{1213}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("no error")
			}
			d := sqlerr.Extract(c.err)
			if d.SQLState != c.state {
				t.Errorf("SQLState %q, want %q (%v)", d.SQLState, c.state, c.err)
			}
			if fmt.Sprint(d.VendorCodes) != fmt.Sprint(c.codes) && !(len(c.codes) == 0 && len(d.VendorCodes) == 0) {
				t.Errorf("codes %v, want %v (%v)", d.VendorCodes, c.codes, c.err)
			}
			if len(c.codes) > 0 && (!d.HasVendor || d.VendorCode != c.codes[0]) {
				t.Errorf("VendorCode %d (%v), want %d", d.VendorCode, d.HasVendor, c.codes[0])
			}
			if d.Constraint != c.constraint {
				t.Errorf("constraint %q, want %q (%v)", d.Constraint, c.constraint, c.err)
			}
		})
	}
	var se *sqlite.Error
	if !errors.As(sqUnique, &se) {
		t.Errorf("sqlite error is %T", sqUnique)
	}
}

var testRules = []dialect.ErrorRule{
	{Class: dialect.ErrDuplicateEventID, SQLState: "23505", ConstraintPattern: `_pkey$`},
	{Class: dialect.ErrUniqueViolation, SQLState: "23505"},
	{Class: dialect.ErrDuplicateEventID, VendorCode: 1062, ConstraintPattern: `^([^ .]+\.)?PRIMARY$`},
	{Class: dialect.ErrUniqueViolation, VendorCode: 1062},
	{Class: dialect.ErrDeadlock, SQLState: "40P01"},
	{Class: dialect.ErrDeadlock, VendorCode: 1213},
	{Class: dialect.ErrDeadlock, VendorCode: 335544336},
	{Class: dialect.ErrReadOnly, SQLState: "25006"},
	{Class: dialect.ErrConnectionLost, SQLState: "08*"},
}

func TestClassifyMatchesConstraintNameNotMessage(t *testing.T) {
	c, err := sqlerr.NewClassifier(testRules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want dialect.ErrorClass
	}{
		{"pgx primary key", &pgconn.PgError{Code: "23505", Message: `duplicate key value violates unique constraint "event_store_pkey"`, ConstraintName: "event_store_pkey"}, dialect.ErrDuplicateEventID},
		// The old rule matched `_pkey"` anywhere in the message; the name
		// here is the unique key of a column whose VALUE says _pkey".
		{"pgx value mentions _pkey", &pgconn.PgError{Code: "23505", Message: `duplicate key value violates unique constraint "t_v_key"`, Detail: `Key (v)=(x_pkey") already exists.`, ConstraintName: "t_v_key"}, dialect.ErrUniqueViolation},
		{"lib/pq primary key", &pq.Error{Code: "23505", Message: `duplicate key value violates unique constraint "e_pkey"`, Constraint: "e_pkey"}, dialect.ErrDuplicateEventID},
		{"mysql primary", mysqlErr(1062, "23000", "Duplicate entry 'x' for key 'PRIMARY'"), dialect.ErrDuplicateEventID},
		{"mysql value says PRIMARY", mysqlErr(1062, "23000", "Duplicate entry 'for key 'PRIMARY'' for key 't.uq_t_seq'"), dialect.ErrUniqueViolation},
		{"mysql deadlock", mysqlErr(1213, "40001", "Deadlock found"), dialect.ErrDeadlock},
		{"firebird deadlock in status vector", &fbError{GDSCodes: []int{335544336}, SQLState: "40001", Message: "deadlock"}, dialect.ErrDeadlock},
		{"pg read-only", &pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"}, dialect.ErrReadOnly},
		{"unmatched", errors.New("something else"), ""},
		{"nil", nil, ""},
	} {
		if got := c.Classify(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := sqlerr.NewClassifier([]dialect.ErrorRule{{Class: "x", ConstraintPattern: "("}}); err == nil {
		t.Errorf("invalid pattern accepted")
	}
}

func TestWrap(t *testing.T) {
	c, err := sqlerr.NewClassifier(testRules)
	if err != nil {
		t.Fatal(err)
	}
	pgDeadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	wrapped := c.Wrap(fmt.Errorf("allocating: %w", pgDeadlock))
	if !errors.Is(wrapped, sqlerr.ErrDeadlock) || !errors.Is(wrapped, sqlerr.ErrTransient) || !sqlerr.IsTransient(wrapped) {
		t.Errorf("deadlock: Is(ErrDeadlock)=%v Is(ErrTransient)=%v", errors.Is(wrapped, sqlerr.ErrDeadlock), errors.Is(wrapped, sqlerr.ErrTransient))
	}
	if errors.Is(wrapped, sqlerr.ErrLockTimeout) || errors.Is(wrapped, sqlerr.ErrUniqueViolation) {
		t.Error("deadlock is another class too")
	}
	var pe *pgconn.PgError
	if !errors.As(wrapped, &pe) || pe != pgDeadlock {
		t.Error("driver error unreachable")
	}
	if wrapped.Error() != "allocating: "+pgDeadlock.Error() {
		t.Errorf("text changed: %q", wrapped.Error())
	}
	// Idempotent: a second Wrap (and a Wrap of a further %w) adds nothing.
	if again := c.Wrap(wrapped); again != wrapped {
		t.Errorf("second Wrap returned a new error %#v", again)
	}
	outer := fmt.Errorf("appending: %w", wrapped)
	if again := c.Wrap(outer); again != outer {
		t.Error("Wrap of a wrapped chain re-wrapped it")
	}
	if got := c.Classify(outer); got != dialect.ErrDeadlock {
		t.Errorf("Classify of wrapped = %q", got)
	}
	// A duplicate event id is a unique violation too, and not transient.
	dup := c.Wrap(&pq.Error{Code: "23505", Constraint: "e_pkey"})
	if !errors.Is(dup, sqlerr.ErrDuplicateEvent) || !errors.Is(dup, sqlerr.ErrUniqueViolation) || sqlerr.IsTransient(dup) {
		t.Errorf("duplicate event: %v", dup)
	}
	ro := c.Wrap(mysqlErr(1792, "25006", "Cannot execute statement in a READ ONLY transaction"))
	var me *mysql.MySQLError
	if !errors.Is(ro, sqlerr.ErrReadOnly) || sqlerr.IsTransient(ro) || !errors.As(ro, &me) {
		t.Errorf("read-only: %v", ro)
	}
	for _, e := range []error{nil, context.Canceled, fmt.Errorf("q: %w", context.DeadlineExceeded), sql.ErrNoRows, errors.New("other")} {
		if got := c.Wrap(e); got != e {
			t.Errorf("Wrap(%v) = %v, want it unchanged", e, got)
		}
	}
	if !errors.Is(c.Wrap(context.Canceled), context.Canceled) {
		t.Error("context.Canceled lost")
	}
	var nilC *sqlerr.Classifier
	if got := nilC.Wrap(pgDeadlock); got != pgDeadlock {
		t.Error("nil classifier changed the error")
	}
}

func TestTransientClasses(t *testing.T) {
	for class, want := range map[dialect.ErrorClass]bool{
		dialect.ErrDeadlock: true, dialect.ErrSerializationFailure: true, dialect.ErrLockTimeout: true, dialect.ErrConnectionLost: true,
		dialect.ErrQueryCanceled: false, dialect.ErrReadOnly: false, dialect.ErrUniqueViolation: false, dialect.ErrDuplicateEventID: false,
		dialect.ErrNotNullViolation: false, dialect.ErrForeignKeyViolation: false, dialect.ErrUndefinedTable: false,
	} {
		e := &sqlerr.Error{Class: class, Err: errors.New("x")}
		if sqlerr.TransientClass(class) != want || sqlerr.IsTransient(e) != want || errors.Is(e, sqlerr.ErrTransient) != want {
			t.Errorf("%s: transient %v, want %v", class, sqlerr.IsTransient(e), want)
		}
		if s := sqlerr.Sentinel(class); s == nil || !errors.Is(e, s) {
			t.Errorf("%s: no sentinel or not Is it", class)
		}
	}
	if sqlerr.IsTransient(nil) || sqlerr.IsTransient(errors.New("x")) {
		t.Error("plain errors are not transient")
	}
}

// BenchmarkWrapTwice shows that classifying an already classified error
// costs one errors.As, not a second extraction.
func BenchmarkWrapTwice(b *testing.B) {
	c, _ := sqlerr.NewClassifier(testRules)
	w := c.Wrap(mysqlErr(1213, "40001", "Deadlock found"))
	for i := 0; i < b.N; i++ {
		_ = c.Wrap(w)
	}
}
