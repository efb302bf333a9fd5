package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
)

var flagFinderModels = flag.Int("finder-models", 1000000, "read models bulk-loaded for the finder cell (PostgreSQL and SQLite; 0: skip it)")

// finderBulk fills the projection's read-model topic and query table with n
// read models in the shape an apply writes them (one state message per
// model, the query row pointing at it), by one INSERT … SELECT each: a
// million applies would take the projection's catch-up rate (minutes).
// Deposits spread over 0..999 so a range holds many models.
var finderBulk = map[string][]string{
	"postgres": {
		`INSERT INTO ${read_model_capture_records_table} (id, topic, topic_position, partition_key, read_model_key,
 read_model_type, payload, cascade_depth, deleted, occurred_at)
SELECT md5('fm' || g)::uuid, 'bench-finders', g, g % 16, 'acc-' || g, 'benchAccount',
 '{"id":"acc-' || g || '","amount":1,"deposits":' || (g % 1000) || '}', 0, false, now()
FROM generate_series(1, #{n}) g`,
		`INSERT INTO ${query_table} (read_model_id, message_id, account_id, deposits)
SELECT 'acc-' || g, md5('fm' || g)::uuid, 'acc-' || g, g % 1000 FROM generate_series(1, #{n}) g`,
		`ANALYZE`,
	},
	"sqlite": {
		`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < #{n})
INSERT INTO ${read_model_capture_records_table} (id, topic, topic_position, partition_key, read_model_key,
 read_model_type, payload, cascade_depth, deleted, occurred_at)
SELECT printf('%08x-0000-4000-8000-%012x', n, n), 'bench-finders', n, n % 16, 'acc-' || n, 'benchAccount',
 '{"id":"acc-' || n || '","amount":1,"deposits":' || (n % 1000) || '}', 0, 0, '2026-01-01T00:00:00Z' FROM g`,
		`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < #{n})
INSERT INTO ${query_table} (read_model_id, message_id, account_id, deposits)
SELECT 'acc-' || n, printf('%08x-0000-4000-8000-%012x', n, n), 'acc-' || n, n % 1000 FROM g`,
		`ANALYZE`,
	},
}

// bigFinderCell bulk-loads *flagFinderModels read models into a fresh
// database and times the finders against the same statements written by
// hand: an indexed equality (FindUnique) and a range page continued by its
// cursor (Find), each pair alternating which side runs first.
func bigFinderCell(ctx context.Context, tg target, fresh func() (*bench, string, error)) error {
	n := *flagFinderModels
	stmts, ok := finderBulk[tg.dialect]
	if n <= 0 || !ok {
		fmt.Printf("   finders on %d read models: not run on %s (bulk load written for PostgreSQL and SQLite)\n", n, tg.dialect)
		return nil
	}
	b, _, err := fresh()
	if err != nil {
		return err
	}
	defer b.close()
	p := projection.New("bench-finders", func(id string) benchAccount { return benchAccount{ID: id} })
	projection.OnType(p, "bench.Deposited", func(projection.Event[benchDeposited], *benchAccount) error { return nil })
	projection.Field(p, "account_id", projection.Text, func(s *benchAccount) string { return s.ID }, projection.Unique())
	projection.Field(p, "deposits", projection.Integer, func(s *benchAccount) int64 { return s.Deposits })
	e, err := engine.Open(ctx, b.db, *b.e.Cat, engine.Config{QueryTables: []schema.QueryTable{p.QueryTable()}})
	if err != nil {
		return err
	}
	defer e.Close()
	st, err := projection.Open(ctx, e, p)
	if err != nil {
		return err
	}
	load := time.Now()
	for _, s := range stmts {
		c, err := e.CompileText(s, map[string]string{"query_table": st.Table()})
		if err != nil {
			return err
		}
		args, err := c.Args(map[string]any{"n": n})
		if err != nil {
			return err
		}
		if _, err := e.DB.ExecContext(ctx, c.SQL, args...); err != nil {
			return fmt.Errorf("bulk load: %w", err)
		}
	}
	fmt.Printf("   finders: %d read models bulk-loaded in %.1f s\n", n, time.Since(load).Seconds())
	if err := uniqueFinder(ctx, e, st, n, func(r *rand.Rand) string { return fmt.Sprintf("acc-%d", 1+r.IntN(n)) }); err != nil {
		return err
	}
	return rangeFinder(ctx, e, st)
}

// uniqueFinder: FindUnique against the hand-written lookup (one indexed
// lookup joined to its message) over n read models, key picks a key.
func uniqueFinder(ctx context.Context, e *engine.Engine, st *projection.Store[benchAccount], n int, key func(*rand.Rand) string) error {
	hand, err := e.CompileText(`SELECT q.read_model_id, r.payload FROM ${query_table} q
LEFT JOIN ${read_model_capture_records_table} r ON r.id = q.message_id WHERE q.account_id = #{id}`,
		map[string]string{"query_table": st.Table()})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var tf, th []time.Duration
	for i := range *flagProjLookups {
		k := key(rng)
		finder := func() error {
			_, ok, err := st.FindUnique(ctx, "account_id", k)
			if err == nil && !ok {
				err = fmt.Errorf("FindUnique(%s): not found", k)
			}
			return err
		}
		byHand := func() error {
			args, err := hand.Args(map[string]any{"id": k})
			if err != nil {
				return err
			}
			var id, payload string
			if err := e.DB.QueryRowContext(ctx, hand.SQL, args...).Scan(&id, &payload); err != nil {
				return err
			}
			var m benchAccount // decoded too: a caller by hand needs the model as much as FindUnique's does
			return json.Unmarshal([]byte(payload), &m)
		}
		df, dh, err := alternate(i, finder, byHand)
		if err != nil {
			return err
		}
		tf, th = append(tf, df), append(th, dh)
	}
	pf, ph := p50(tf), p50(th)
	fmt.Printf("   finder FindUnique (indexed equality) over %d read models: p50 %v vs hand-written SQL + json.Unmarshal %v  ratio %.2f (target ≥ 0.9)\n",
		n, pf, ph, float64(ph)/float64(pf))
	return nil
}

// rangeFinder: a page of 20 of deposits ≥ x in deposits order and the page
// after it (keyset), against the same two statements by hand.
func rangeFinder(ctx context.Context, e *engine.Engine, st *projection.Store[benchAccount]) error {
	hand, err := e.CompileText(`SELECT q.read_model_id, q.deposits, r.payload FROM ${query_table} q
LEFT JOIN ${read_model_capture_records_table} r ON r.id = q.message_id
WHERE q.deposits >= #{min} AND (q.deposits > #{d} OR (q.deposits = #{d} AND q.read_model_id > #{k}))
ORDER BY q.deposits, q.read_model_id`+" "+limitClause(e, 21),
		map[string]string{"query_table": st.Table()})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var tf, th []time.Duration
	for i := range *flagProjLookups / 2 {
		lo := int64(rng.IntN(990))
		finder := func() error {
			q := projection.Query{Where: []projection.Cond{projection.Ge("deposits", lo)}, OrderBy: "deposits", Limit: 20}
			first, err := st.Find(ctx, q)
			if err != nil {
				return err
			}
			q.After = first.Next
			next, err := st.Find(ctx, q)
			if err == nil && (len(first.Items) != 20 || len(next.Items) != 20) {
				err = fmt.Errorf("range pages of %d and %d models, want 20 each", len(first.Items), len(next.Items))
			}
			return err
		}
		byHand := func() error {
			d, k := lo-1, ""
			for range 2 {
				args, err := hand.Args(map[string]any{"min": lo, "d": d, "k": k})
				if err != nil {
					return err
				}
				rows, err := e.DB.QueryContext(ctx, hand.SQL, args...)
				if err != nil {
					return err
				}
				got := 0
				for rows.Next() {
					var payload string
					var m benchAccount
					if err := rows.Scan(&k, &d, &payload); err != nil {
						rows.Close()
						return err
					}
					if err := json.Unmarshal([]byte(payload), &m); err != nil {
						rows.Close()
						return err
					}
					if got++; got == 20 {
						break
					}
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
			}
			return nil
		}
		df, dh, err := alternate(i, finder, byHand)
		if err != nil {
			return err
		}
		tf, th = append(tf, df), append(th, dh)
	}
	pf, ph := p50(tf), p50(th)
	fmt.Printf("   finder Find (range, two keyset pages of 20): p50 %v vs hand-written SQL + json.Unmarshal %v  ratio %.2f (target ≥ 0.9)\n",
		pf, ph, float64(ph)/float64(pf))
	return nil
}

// limitClause is "LIMIT n" or the engine's form of it.
func limitClause(e *engine.Engine, n int) string {
	if e.Cat.Identity.Name == "sqlserver" {
		return fmt.Sprintf("OFFSET 0 ROWS FETCH NEXT %d ROWS ONLY", n)
	}
	return fmt.Sprintf("LIMIT %d", n)
}

// alternate times a and b, a first on even rounds and b first on odd ones,
// so neither side always meets the pages the other just read.
func alternate(i int, a, b func() error) (da, db time.Duration, err error) {
	timed := func(f func() error) (time.Duration, error) {
		t0 := time.Now()
		err := f()
		return time.Since(t0), err
	}
	if i%2 == 0 {
		if da, err = timed(a); err == nil {
			db, err = timed(b)
		}
		return
	}
	if db, err = timed(b); err == nil {
		da, err = timed(a)
	}
	return
}
