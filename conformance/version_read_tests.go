package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// Stream lengths of testStreamVersionsReadFlat.
const (
	shortStream = 10
	longStream  = 100_000
)

// testStreamVersionsReadFlat checks that a group commit's version read
// (event.stream_versions) costs the server the same whatever the length of
// the streams it reads: the server's own count of what one call reads (rows
// on PostgreSQL, MariaDB and H2, pages on SQLite), for a stream of 10 events
// and one of 100,000, differs by less than a factor of 2. A read of every
// row of a stream (an IN list under GROUP BY, a scan of the table) reads
// thousands of times more for the long one.
func testStreamVersionsReadFlat(t T, env *Env) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	probe := readProbeFor(env)
	if probe == nil {
		skipf(t, "no counter of the rows the server reads is known for %s (driver %s)", env.Catalogue.Identity.Name, env.Driver)
	}
	s, e := openStore(t, env)
	if !e.Has(dialect.StreamVersions) {
		skipf(t, "%s", "the dialect declares no event.stream_versions: a group commit reads versions stream by stream (event.stream_version)")
	}
	table := e.Names.Shared["event_store_table"]
	read, err := e.Compile(dialect.StreamVersions, map[string]string{"event_store_table": table})
	if err != nil {
		t.Fatalf("compiling %s: %v", dialect.StreamVersions, err)
	}
	counts := map[int]int64{}
	for _, n := range []int{shortStream, longStream} {
		id := newID(t)
		loadStream(ctx, t, s, id, n)
		args, err := read.Args(idBinds(id))
		if err != nil {
			t.Fatalf("binding %s: %v", dialect.StreamVersions, err)
		}
		got, err := probe(ctx, env.DB, read.SQL, args)
		if err != nil {
			t.Fatalf("counting what %s reads for a stream of %d events: %v", dialect.StreamVersions, n, err)
		}
		counts[n] = got
		t.Logf("%s for a stream of %d events: %d read", dialect.StreamVersions, n, got)
	}
	// Flat: fewer than one read more per 200 events added. A count of
	// pages grows with the index's depth (SQLite: ~50 to ~150); a read of
	// every row grows by one per event (or one per ~75 index entries, in
	// pages).
	if grown := counts[longStream] - counts[shortStream]; grown*200 > longStream-shortStream {
		t.Errorf("%s read %d for a stream of %d events and %d for one of %d: the read grows with the stream (want an index probe per id)\n%s",
			dialect.StreamVersions, counts[longStream], longStream, counts[shortStream], shortStream, read.SQL)
	}
	// The read still answers: the long stream's last version.
	checkVersionRead(ctx, t, e, read, s)
}

// loadStream appends n events to stream id in appends of 5,000.
func loadStream(ctx context.Context, t T, s *eventstore.Store, id string, n int) {
	t.Helper()
	for done := 0; done < n; {
		k := min(5000, n-done)
		evs := make([]eventstore.Event, k)
		for i := range evs {
			evs[i] = ev("test.E", `{}`)
		}
		want := eventstore.NoStream
		if done > 0 {
			want = eventstore.Exactly(int64(done - 1))
		}
		if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Expected: want, Events: evs}); err != nil {
			t.Fatalf("loading %d events into %s: %v", n, id, err)
		}
		done += k
	}
}

// idBinds fills every bind of StreamVersions with id (as the core fills the
// binds it has no id for).
func idBinds(id string) map[string]any {
	vals := make(map[string]any, len(dialect.StreamVersionsBinds))
	for _, b := range dialect.StreamVersionsBinds {
		vals[b] = id
	}
	return vals
}

// checkVersionRead reads two streams in one call: one just appended to (its
// version), one never written (no row).
func checkVersionRead(ctx context.Context, t T, e *engine.Engine, read dialect.Compiled, s *eventstore.Store) {
	t.Helper()
	id, absent := newID(t), newID(t)
	loadStream(ctx, t, s, id, 3)
	vals := idBinds(id)
	vals[dialect.StreamVersionsBinds[1]] = absent
	args, err := read.Args(vals)
	if err != nil {
		t.Fatalf("binding: %v", err)
	}
	rows, err := e.DB.QueryContext(ctx, read.SQL, args...)
	if err != nil {
		t.Fatalf("%s: %v", dialect.StreamVersions, err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var rid, typ string
		var v int64
		if err := rows.Scan(&rid, &v, &typ); err != nil {
			t.Fatalf("scanning %s: %v", dialect.StreamVersions, err)
		}
		got = append(got, fmt.Sprintf("%s %d %s", rid, v, typ))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", dialect.StreamVersions, err)
	}
	if want := id + " 2 bank.Account"; len(got) != 1 || got[0] != want {
		t.Errorf("%s returned %q, want one row %q (none for the empty stream)", dialect.StreamVersions, got, want)
	}
}

// readProbe runs query on one connection of db and returns what the
// server counts it read.
type readProbe func(ctx context.Context, db *sql.DB, query string, args []any) (int64, error)

// readProbeFor is the server's read counter for env's engine, nil if none
// is known.
func readProbeFor(env *Env) readProbe {
	switch {
	case env.Driver == "pgx" || env.Driver == "postgres":
		return pgRowsRead
	case env.Driver == "mysql":
		return mysqlRowsRead
	case env.Driver == "sqlite":
		return sqlitePagesRead
	case env.Catalogue.Identity.Name == "h2":
		return h2RowsRead
	case env.Catalogue.Identity.Name == "hsqldb":
		return hsqldbRowsRead
	case env.Catalogue.Identity.Name == "firebird":
		return firebirdRowsRead
	}
	return nil
}

// pgRowsRead is the rows every scan of the plan produced or filtered out,
// over all its loops (EXPLAIN ANALYZE).
func pgRowsRead(ctx context.Context, db *sql.DB, query string, args []any) (int64, error) {
	var out string
	if err := db.QueryRowContext(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+query, args...).Scan(&out); err != nil {
		return 0, err
	}
	var plans []struct{ Plan pgPlan }
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		return 0, err
	}
	var n float64
	for _, p := range plans {
		n += p.Plan.rowsRead()
	}
	return int64(n), nil
}

type pgPlan struct {
	Relation string   `json:"Relation Name"`
	Rows     float64  `json:"Actual Rows"`
	Loops    float64  `json:"Actual Loops"`
	Removed  float64  `json:"Rows Removed by Filter"`
	Plans    []pgPlan `json:"Plans"`
}

func (p pgPlan) rowsRead() float64 {
	n := 0.0
	if p.Relation != "" {
		n = (p.Rows + p.Removed) * p.Loops
	}
	for _, c := range p.Plans {
		n += c.rowsRead()
	}
	return n
}

// counterGrowth is how much counter, read on one connection, grows over
// the query run on that connection; warm runs the query once before the
// first read (the statement prepared, the schema read).
func counterGrowth(ctx context.Context, db *sql.DB, query string, args []any, warm bool,
	counter func(*sql.Conn) (int64, error)) (int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if warm {
		if err := drain(conn.QueryContext(ctx, query, args...)); err != nil {
			return 0, err
		}
	}
	before, err := counter(conn)
	if err != nil {
		return 0, err
	}
	if err := drain(conn.QueryContext(ctx, query, args...)); err != nil {
		return 0, err
	}
	after, err := counter(conn)
	return after - before, err
}

// mysqlRowsRead is the session's Handler_read_* counters' growth over the
// query (every row a storage engine handed the server).
func mysqlRowsRead(ctx context.Context, db *sql.DB, query string, args []any) (int64, error) {
	return counterGrowth(ctx, db, query, args, false, func(conn *sql.Conn) (int64, error) {
		rows, err := conn.QueryContext(ctx, "SHOW SESSION STATUS LIKE 'Handler_read%'")
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		var sum int64
		for rows.Next() {
			var name, val string
			if err := rows.Scan(&name, &val); err != nil {
				return 0, err
			}
			v, _ := strconv.ParseInt(val, 10, 64)
			sum += v
		}
		return sum, rows.Err()
	})
}

// firebirdRowsRead is the growth over the query of the connection's
// record reads in Firebird's monitoring tables (sequential and indexed).
// Each count is read in a transaction of its own: the monitoring tables
// are a snapshot taken at a transaction's first look.
func firebirdRowsRead(ctx context.Context, db *sql.DB, query string, args []any) (int64, error) {
	return counterGrowth(ctx, db, query, args, false, func(conn *sql.Conn) (int64, error) {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		defer func() { _ = tx.Rollback() }()
		var n int64
		err = tx.QueryRowContext(ctx, `SELECT r.MON$RECORD_SEQ_READS + r.MON$RECORD_IDX_READS
			FROM MON$ATTACHMENTS a JOIN MON$RECORD_STATS r ON r.MON$STAT_ID = a.MON$STAT_ID
			WHERE a.MON$ATTACHMENT_ID = CURRENT_CONNECTION`).Scan(&n)
		return n, err
	})
}

// sqlitePagesRead is the pages the connection looked up in its cache (hits
// and misses) over the query, run once before: SQLite counts pages, not
// rows.
func sqlitePagesRead(ctx context.Context, db *sql.DB, query string, args []any) (int64, error) {
	return counterGrowth(ctx, db, query, args, true, func(conn *sql.Conn) (n int64, err error) {
		err = conn.Raw(func(dc any) error {
			st, ok := dc.(sqlite.DBStatus)
			if !ok {
				return fmt.Errorf("the driver's connection (%T) has no sqlite3_db_status", dc)
			}
			for _, op := range []sqlite.DBStatusOp{sqlite.DBStatusCacheHit, sqlite.DBStatusCacheMiss} {
				cur, _, err := st.Status(op, false)
				if err != nil {
					return err
				}
				n += int64(cur)
			}
			return nil
		})
		return n, err
	})
}

// h2ScanCount matches the per-table count H2's EXPLAIN ANALYZE prints.
var h2ScanCount = regexp.MustCompile(`scanCount: (\d+)`)

// h2RowsRead is the sum of the scan counts EXPLAIN ANALYZE reports.
func h2RowsRead(ctx context.Context, db *sql.DB, query string, args []any) (int64, error) {
	var plan string
	if err := db.QueryRowContext(ctx, "EXPLAIN ANALYZE "+query, args...).Scan(&plan); err != nil {
		return 0, err
	}
	var n int64
	for _, m := range h2ScanCount.FindAllStringSubmatch(plan, -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n += v
	}
	if !strings.Contains(plan, "scanCount") {
		return 0, fmt.Errorf("EXPLAIN ANALYZE printed no scanCount: %s", plan)
	}
	return n, nil
}

// drain reads rows to their end and closes them.
func drain(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// hsqldbRowsRead is what HSQLDB's plan (EXPLAIN PLAN FOR) says each select
// of the query reads, HSQLDB keeping no counter of rows read: a table
// reached by an index predicate whose order the index gives (it prints
// "uses index") with a row limit reads at most that many rows; any other
// access (a full scan, an index range read whole to be sorted or grouped)
// is counted at the table's cardinality, the most it can read. EXPLAIN
// takes no parameters: the args are written in as literals.
func hsqldbRowsRead(ctx context.Context, db *sql.DB, query string, args []any) (int64, error) {
	q := query
	for _, a := range args {
		lit := fmt.Sprint(a)
		switch a.(type) {
		case int, int32, int64, float64, bool:
		case nil:
			lit = "NULL"
		default:
			lit = "'" + strings.ReplaceAll(lit, "'", "''") + "'"
		}
		q = strings.Replace(q, "?", lit, 1)
	}
	rows, err := db.QueryContext(ctx, "EXPLAIN PLAN FOR "+q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return 0, err
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return hsqldbPlanReads(plan.String())
}

var (
	hsqldbAccess     = regexp.MustCompile(`cardinality=(\d+)\s+access=([A-Z ]+)`)
	hsqldbLimit      = regexp.MustCompile(`limit=\[\s*VALUE = (\d+)`)
	hsqldbOrderByIdx = regexp.MustCompile(`uses index`)
)

// hsqldbPlanReads sums the reads hsqldbRowsRead describes over the selects
// of plan (each begins with isDistinctSelect).
func hsqldbPlanReads(plan string) (int64, error) {
	var n int64
	selects := strings.Split(plan, "isDistinctSelect")[1:]
	if len(selects) == 0 {
		return 0, fmt.Errorf("EXPLAIN PLAN printed no select: %s", plan)
	}
	for _, sel := range selects {
		limit := int64(-1)
		if m := hsqldbLimit.FindStringSubmatch(sel); m != nil {
			limit, _ = strconv.ParseInt(m[1], 10, 64)
		}
		stops := limit >= 0 && hsqldbOrderByIdx.MatchString(sel)
		for _, m := range hsqldbAccess.FindAllStringSubmatch(sel, -1) {
			card, _ := strconv.ParseInt(m[1], 10, 64)
			if stops && strings.TrimSpace(m[2]) == "INDEX PRED" {
				n += min(limit, card)
			} else {
				n += card
			}
		}
	}
	return n, nil
}
