package conformance_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance"
	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// Replica test sizes: 2 writer processes × 1500 single-event appends run
// for a few seconds on this machine, several times the 2 s apply delay of
// the second replica, so reads spread over both replicas see two pasts.
const (
	replicaWriters      = 2
	replicaWriterEvents = 1500
	// replicaPageSize is small (100) so a catch-up takes many pages, each
	// a chance to read the mark and the page on different replicas.
	replicaPageSize = 100
)

// replicaConfig is the engine configuration of the replica test's writers
// and readers.
var replicaConfig = engine.Config{Partitions: 8}

func init() {
	// replica-append appends its share of single-event streams on the
	// primary and reports their global positions.
	conformance.RegisterWorkerAction("replica-append", func(ctx context.Context, db *sql.DB, job conformance.WorkerJob) (any, error) {
		var args struct {
			Writer, Events int
		}
		if err := json.Unmarshal(job.Args, &args); err != nil {
			return nil, err
		}
		e, err := engine.Open(ctx, db, job.Catalogue, job.Config)
		if err != nil {
			return nil, err
		}
		defer e.Close()
		s := eventstore.New(e, nil)
		positions := make([]int64, 0, args.Events)
		for i := 0; i < args.Events; i++ {
			res, err := s.Append(ctx, eventstore.Stream{AggregateType: "Replica", AggregateID: fmt.Sprintf("w%d-%d", args.Writer, i),
				Expected: eventstore.NoStream, Events: []eventstore.Event{{Type: "Appended", Payload: []byte(`{}`)}}})
			if err != nil {
				return nil, err
			}
			positions = append(positions, res.Positions...)
		}
		return positions, nil
	})
}

// roundRobin is a connector that opens each new connection on the next of
// its servers in turn: a load balancer in front of replicas.
type roundRobin struct {
	connectors []driver.Connector
	next       atomic.Uint64
}

func newRoundRobin(driverName string, dsns ...string) (*roundRobin, error) {
	probe, err := sql.Open(driverName, dsns[0])
	if err != nil {
		return nil, err
	}
	defer probe.Close()
	r := &roundRobin{}
	for _, dsn := range dsns {
		var c driver.Connector = dsnConnector{probe.Driver(), dsn}
		if dc, ok := probe.Driver().(driver.DriverContext); ok {
			if c, err = dc.OpenConnector(dsn); err != nil {
				return nil, err
			}
		}
		r.connectors = append(r.connectors, c)
	}
	return r, nil
}

// dsnConnector is a connector for a driver without its own (lib/pq).
type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// Connect opens a connection on the next server.
func (r *roundRobin) Connect(ctx context.Context) (driver.Conn, error) {
	i := r.next.Add(1)
	return r.connectors[i%uint64(len(r.connectors))].Connect(ctx)
}

// Driver is the servers' driver.
func (r *roundRobin) Driver() driver.Driver { return r.connectors[0].Driver() }

// roundRobinDB is a pool whose every statement outside a transaction runs
// on a new connection, alternating between the servers: no idle connection
// is kept, so consecutive reads never share a server.
func roundRobinDB(t *testing.T, driverName string, dsns ...string) *sql.DB {
	t.Helper()
	rr, err := newRoundRobin(driverName, dsns...)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(rr)
	db.SetMaxIdleConns(0)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReplicas reads, through a pool alternating between two replicas of
// which one is 2 s behind, while writer processes append on the primary:
// Follow and a ReadAll loop must see every event exactly once.
func TestReplicas(t *testing.T) {
	t.Parallel() // its own servers: it runs beside the other parallel tests, after TestConformance
	for _, drv := range []string{"pgx", "postgres"} {
		t.Run("postgres ("+map[string]string{"pgx": "pgx", "postgres": "lib/pq"}[drv]+")", func(t *testing.T) {
			testReplicaReads(t, drv)
		})
	}
}

func testReplicaReads(t *testing.T, drv string) {
	if err := pluginErr("postgres"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := testtime.Context(context.Background(), 5*time.Minute)
	defer cancel()
	rs, err := provider.PostgresReplicas(ctx)
	var sk *harness.Skipped
	if errors.As(err, &sk) {
		t.Skip(sk.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rs.Source())
	primary, replicas, err := rs.Database(ctx, drv)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := plugin.Load(ctx, plugin.LoadOptions{Name: "postgres", PluginDirs: []string{pluginDir}})
	if err != nil {
		t.Fatal(err)
	}
	pdb, err := sql.Open(drv, primary.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	pe, err := engine.Open(ctx, pdb, loaded.Catalogue, replicaConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer pe.Close()
	advCtx, stopAdv := context.WithCancel(ctx)
	defer stopAdv()
	adv := hwm.New(pe, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = adv.Run(advCtx) }()

	// The schema reaches the replicas through WAL (the delayed one 2 s late).
	if err := rs.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	reader := openReplicaReader(t, ctx, loaded.Catalogue, roundRobinDB(t, drv, replicas[0].DSN, replicas[1].DSN))
	follow := newSeen()
	readAll := newSeen()
	consumed := newSeen()
	readCtx, stopReaders := context.WithCancel(ctx)
	defer stopReaders()
	// A consumer checkpointing on the primary and reading its events from
	// the replicas (the read-only store).
	runner, err := consumer.NewRunner(ctx, consumer.NewRegistry(pe, nil), consumer.Options{Type: "projection", Name: "replica-reader",
		PollInterval: 20 * time.Millisecond, PageSize: replicaPageSize,
		Routes: []consumer.Route{consumer.On(consumer.EventStore(reader, nil), func(_ context.Context, _ *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			consumed.add(m.Position)
			return nil
		})}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		consumed.fail(runner.Run(readCtx))
	}()
	go func() {
		defer wg.Done()
		err := reader.Follow(readCtx, 0, eventstore.FollowOptions{PollInterval: 20 * time.Millisecond, PageSize: replicaPageSize},
			func(r eventstore.Recorded) error { follow.add(r.GlobalPosition); return nil })
		follow.fail(err)
	}()
	go func() {
		defer wg.Done()
		readAll.fail(readAllLoop(readCtx, reader, readAll))
	}()

	want := runReplicaWriters(t, ctx, loaded.Catalogue, drv, primary.DSN)
	last := int64(0)
	for p := range want {
		last = max(last, p)
	}
	// Hang guard only: both readers reach the last position (the delayed
	// replica 2 s late, the mark a poll later).
	deadline := testtime.Deadline(2 * time.Minute)
	for (follow.last() < last || readAll.last() < last || consumed.count() < len(want)) && time.Now().Before(deadline) &&
		follow.err() == nil && readAll.err() == nil && consumed.err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	stopReaders()
	wg.Wait()
	for name, s := range map[string]*seen{"Follow": follow, "ReadAll": readAll, "consumer": consumed} {
		skipped, dup := s.compare(want)
		t.Logf("%s over 2 replicas: %d events appended, %d read, %d skipped, %d duplicated (last position %d of %d)",
			name, len(want), s.count(), skipped, dup, s.last(), last)
		if s.err() != nil {
			t.Errorf("%s: %v", name, s.err())
		}
		if skipped != 0 || dup != 0 || s.last() < last {
			t.Errorf("%s: %d skipped, %d duplicated, reached %d of %d", name, skipped, dup, s.last(), last)
		}
	}
}

// openReplicaReader opens a read-only engine on db (replicas only: it must
// create nothing) and returns its store.
func openReplicaReader(t *testing.T, ctx context.Context, cat dialect.Catalogue, db *sql.DB) *eventstore.Store {
	t.Helper()
	cfg := replicaConfig
	cfg.ReadOnly = true
	e, err := engine.Open(ctx, db, cat, cfg)
	if err != nil {
		t.Fatalf("read-only engine on the replicas: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return eventstore.New(e, nil)
}

// readAllLoop pages through the store with ReadAll until ctx ends.
func readAllLoop(ctx context.Context, s *eventstore.Store, into *seen) error {
	after := int64(0)
	for ctx.Err() == nil {
		page, err := s.ReadAll(ctx, after, replicaPageSize)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		for _, r := range page {
			into.add(r.GlobalPosition)
			after = r.GlobalPosition
		}
		if len(page) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

func runReplicaWriters(t *testing.T, ctx context.Context, cat dialect.Catalogue, drv, dsn string) map[int64]bool {
	t.Helper()
	jobs := make([]conformance.WorkerJob, replicaWriters)
	for i := range jobs {
		args, _ := json.Marshal(map[string]int{"Writer": i, "Events": replicaWriterEvents})
		jobs[i] = conformance.WorkerJob{Action: "replica-append", Catalogue: cat, Driver: drv, DSN: dsn, Config: replicaConfig, Args: args}
	}
	results, err := conformance.RunWorkers(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{}
	for i, r := range results {
		if !r.OK {
			t.Fatalf("writer %d: %s %s", i, r.ErrorKind, r.Error)
		}
		var ps []int64
		if err := json.Unmarshal(r.Data, &ps); err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			want[p] = true
		}
	}
	return want
}

// seen counts the positions a reader delivered.
type seen struct {
	mu      sync.Mutex
	counts  map[int64]int
	n       int
	lastPos int64
	firstEr error
}

func newSeen() *seen { return &seen{counts: map[int64]int{}} }

func (s *seen) add(p int64) {
	s.mu.Lock()
	s.counts[p]++
	s.n++
	s.lastPos = max(s.lastPos, p)
	s.mu.Unlock()
}

func (s *seen) fail(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	s.mu.Lock()
	if s.firstEr == nil {
		s.firstEr = err
	}
	s.mu.Unlock()
}

func (s *seen) err() error  { s.mu.Lock(); defer s.mu.Unlock(); return s.firstEr }
func (s *seen) last() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.lastPos }
func (s *seen) count() int  { s.mu.Lock(); defer s.mu.Unlock(); return s.n }

// compare returns how many wanted positions were never delivered and how
// many deliveries repeated a position.
func (s *seen) compare(want map[int64]bool) (skipped, duplicated int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range want {
		if s.counts[p] == 0 {
			skipped++
		}
	}
	for _, c := range s.counts {
		if c > 1 {
			duplicated += c - 1
		}
	}
	return skipped, duplicated
}
