package conformance

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// testSagaOwnTablePrefixed: a saga declared with its own table in
// schema.Config.Sagas gets the saga prefix before the SCREAMING_SNAKE_CASE
// of its name (conformance.TransferSaga → SG_TRANSFER_SAGA); the engine
// creates it, saga.Open finds it without WithTable and the saga writes its
// instances there, not in the shared table. An explicit table takes no
// prefix. Underivable names are refused before any SQL.
func testSagaOwnTablePrefixed(t T, env *Env) {
	cfg := defaultConfig(env)
	cfg.Names.Prefixes = map[dialect.Area]string{dialect.AreaSaga: "SG_"}
	cfg.Names.Sagas = []schema.Saga{{Type: "conformance.TransferSaga", OwnTable: true}, {Type: "conformance.Explicit", Table: "EXPLICIT_SAGA"}}
	e := openEngine(t, env, cfg)
	for typ, want := range map[string]string{"conformance.TransferSaga": "SG_TRANSFER_SAGA", "conformance.Explicit": "EXPLICIT_SAGA"} {
		if got := e.Names.BySaga[typ]; got != want {
			t.Errorf("table of %s = %q, want %q", typ, got, want)
		}
	}
	saga := map[dialect.Area]bool{dialect.AreaSaga: true}
	if err := schema.Verify(context.Background(), e.DB, e.Cat, schema.Objects(e.Cat, e.Names), saga); err != nil {
		t.Fatalf("the saga tables: %v", err)
	}
	for typ, table := range map[string]string{"conformance.TransferSaga": "SG_TRANSFER_SAGA", "conformance.Explicit": "EXPLICIT_SAGA"} {
		sagaWritesTo(t, e, typ, table)
	}
	if _, err := openSagaWithTable(e, "conformance.TransferSaga", "SG_SAGA_INSTANCES"); !errors.Is(err, errInvalidDeclaration) {
		t.Errorf("WithTable contradicting the declared table: %v, want ErrInvalidDeclaration", err)
	}
	for _, bad := range []schema.Saga{{Type: "conformance.!!!", OwnTable: true}, {Type: "conformance.Y", Table: "bad name"}} {
		c := defaultConfig(env)
		c.Names.Sagas = []schema.Saga{bad}
		_, err := engine.Open(context.Background(), env.DB, env.Catalogue, c)
		var inv *schema.InvalidNameError
		if !errors.As(err, &inv) {
			t.Errorf("saga %+v: %v, want *schema.InvalidNameError", bad, err)
		}
	}
}

var errInvalidDeclaration = saga.ErrInvalidDeclaration

func openSagaWithTable(e *engine.Engine, typ, table string) (*saga.Store[sagaState], error) {
	return saga.Open(e, testSaga(typ, nil, saga.WithTable(table)))
}

// sagaWritesTo opens the suite's saga as typ without WithTable, checks it
// resolved to table, starts an instance and finds its row there and none
// in the shared saga table.
func sagaWritesTo(t T, e *engine.Engine, typ, table string) {
	t.Helper()
	st, err := saga.Open(e, testSaga(typ, nil))
	if err != nil {
		t.Fatalf("saga.Open(%s): %v", typ, err)
	}
	if st.Table() != table {
		t.Errorf("%s opened on %q, want %q", typ, st.Table(), table)
	}
	ctx := context.Background()
	err = e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		return st.Apply(ctx, tx, sagaRecord(t, sagaOpened{ID: "own-1"}))
	})
	if err != nil {
		t.Fatalf("apply to %s: %v", typ, err)
	}
	for tab, want := range map[string]int{table: 1, e.Names.Shared["saga_instances_table"]: 0} {
		var n int
		c, err := e.CompileText("SELECT COUNT(*) FROM "+tab+" WHERE saga_type = #{saga_type}", nil) // validated names
		if err != nil {
			t.Fatal(err)
		}
		args, err := c.Args(map[string]any{"saga_type": typ})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.DB.QueryRowContext(ctx, c.SQL, args...).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", tab, err)
		}
		if n != want {
			t.Errorf("%s holds %d instances of %s, want %d", tab, n, typ, want)
		}
	}
}
