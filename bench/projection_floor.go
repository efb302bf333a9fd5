package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// handProjection names the floor's query table: the bench projection's
// shape under another name, written only by hand.
const handProjection = "bench-accounts-by-hand"

// floorWriter writes, by hand, the rows a projection writes for a chunk of
// new read models: each state in the read-model records table, each
// query-table row, each READ_MODEL_EPOCHS row, one multi-row INSERT per
// table. It reads nothing (it knows every read model is new) and numbers
// its topic in memory: a floor no projection can pass, since a projection
// must read before it writes and take its positions from the database.
type floorWriter struct {
	e     *engine.Engine
	table string
	pos   atomic.Int64
	mu    sync.Mutex
	stmts map[string]*sql.Stmt // "kind/rows" → the insert of that many rows, prepared
}

// floorTexts are the three inserts' heads and one row each, in the
// engine's template language (the dialect's placeholders and names).
var floorTexts = map[string][2]string{
	"records": {`INSERT INTO ${read_model_capture_records_table} (id, topic, topic_position, partition_key, read_model_key,
read_model_type, payload, metadata, cascade_depth, deleted, occurred_at) VALUES `,
		"(#{id}, #{topic}, #{pos}, #{part}, #{key}, #{type}, #{payload}, #{meta}, #{depth}, #{deleted}, #{at})"},
	"query":  {"INSERT INTO ${query_table} (read_model_id, message_id, account_id, deposits) VALUES ", "(#{key}, #{id}, #{account}, #{deposits})"},
	"epochs": {"INSERT INTO ${read_model_epochs_table} (projection, read_model_key, epoch) VALUES ", "(#{projection}, #{key}, #{epoch})"},
}

// insert runs kind's insert of rows (each row's binds in the text's order).
func (f *floorWriter) insert(ctx context.Context, tx *sql.Tx, kind string, rows [][]any) error {
	ck := fmt.Sprintf("%s/%d", kind, len(rows))
	stmt, err := f.prepared(ctx, ck, kind, len(rows))
	if err != nil {
		return err
	}
	args := make([]any, 0, len(rows)*len(rows[0]))
	for _, r := range rows {
		args = append(args, r...)
	}
	_, err = tx.StmtContext(ctx, stmt).ExecContext(ctx, args...)
	return err
}

// prepared is kind's insert of n rows, prepared once (as the engine's
// inserts are).
func (f *floorWriter) prepared(ctx context.Context, ck, kind string, n int) (*sql.Stmt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st, ok := f.stmts[ck]; ok {
		return st, nil
	}
	head, row := floorTexts[kind][0], floorTexts[kind][1]
	comp, err := f.e.CompileText(head+strings.TrimSuffix(strings.Repeat(row+", ", n), ", "),
		map[string]string{"query_table": f.table})
	if err != nil {
		return nil, err
	}
	st, err := f.e.DB.PrepareContext(ctx, comp.SQL)
	if err != nil {
		return nil, err
	}
	f.stmts[ck] = st
	return st, nil
}

// close releases the prepared inserts.
func (f *floorWriter) close() {
	for _, st := range f.stmts {
		st.Close()
	}
}

// handle is the floor's chunk handler: the bench projection's listener on
// a fresh state per event, its state encoded, and the three inserts.
func (f *floorWriter) handle(ctx context.Context, tx *sql.Tx, ms []consumer.Msg[eventstore.Recorded]) error {
	now := f.e.Cat.Facts.CutEventTime(time.Now())
	recs, qs, eps := make([][]any, len(ms)), make([][]any, len(ms)), make([][]any, len(ms))
	for i, m := range ms {
		var ev benchDeposited
		if err := json.Unmarshal(m.Value.Payload, &ev); err != nil {
			return err
		}
		// A key of its own per event: the cell's aggregates repeat now and
		// then, and the floor never updates.
		key := fmt.Sprintf("%s/%d", m.Value.AggregateID, m.Position)
		s := benchAccount{ID: key, Amount: ev.Amount, Deposits: 1}
		payload, err := json.Marshal(s)
		if err != nil {
			return err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		recs[i] = []any{id.String(), handProjection, f.pos.Add(1), topic.PartitionKey(key, f.e.Partitions), key,
			"bench.Account", string(payload), nil, 1, false, now}
		qs[i] = []any{key, id.String(), s.ID, s.Deposits}
		eps[i] = []any{handProjection, key, int64(0)}
	}
	for _, kind := range []struct {
		name string
		rows [][]any
	}{{"records", recs}, {"query", qs}, {"epochs", eps}} {
		if err := f.insert(ctx, tx, kind.name, kind.rows); err != nil {
			return fmt.Errorf("floor %s insert: %w", kind.name, err)
		}
	}
	return nil
}

// floorRate runs the floor over the cell's n events (one per aggregate:
// every read model new) in a Transactional consumer with the projection's
// chunks, and returns events per second.
func floorRate(ctx context.Context, b *bench, e *engine.Engine, table string, n int) (float64, error) {
	f := &floorWriter{e: e, table: table, stmts: map[string]*sql.Stmt{}}
	defer f.close()
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), consumer.Options{
		Type: "bench", Name: "projection-floor", Transactional: true, TxBatch: projection.DefaultTxBatch,
		Routes: []consumer.Route{consumer.OnChunk(consumer.EventStore(eventstore.New(e, nil), nil), f.handle)},
	})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := pollAll(ctx, r.Poll, n, "floor applied events"); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
