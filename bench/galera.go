package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
)

// The Galera cell of issue 12: single-event appends on a 3-node MariaDB
// Galera cluster (started by the harness on loopback), written (a) all
// through node 1 and (b) round-robin through the 3 nodes, with Append's
// default retry counting the transient errors it retries.
var (
	flagGalera        = flag.Bool("galera", true, "run the Galera cell (writes through 1 node vs 3 nodes)")
	flagGaleraOnly    = flag.Bool("galera-only", false, "run only the Galera cell")
	flagGaleraTime    = flag.Duration("galera-duration", 10*time.Second, "duration of each Galera case")
	flagGaleraWriters = flag.Int("galera-writers", 8, "concurrent writers of each Galera case")
	flagGaleraGroup   = flag.String("galera-group", "on,off", "group commit settings of the Galera cases (on, off or both)")
	flagGaleraTries   = flag.Int("galera-attempts", 0, "Retry.Attempts of the Galera writers (0: eventstore.DefaultRetry's)")
	flagGaleraMax     = flag.Duration("galera-backoff-max", 0, "Retry.Max of the Galera writers (0: eventstore.DefaultRetry's)")
	flagGaleraDSN     = flag.String("galera-dsn", "", "extra DSN parameters of the Galera writers' connections (e.g. wsrep_sync_wait=2)")
)

// galeraStreams is how many streams the writers spread over, with
// Expected Any: enough that two appends rarely share a stream, so the
// conflicts measured are the counter row's, the one every append takes.
const galeraStreams = 100000

// galeraAfterDialects tells whether the full run ends with the Galera cell:
// not when another cell was asked for alone, nor when -only names dialects
// without mariadb.
func galeraAfterDialects() bool {
	if !*flagGalera || *flagLeasesOnly || *flagConsumersOnly || *flagStmts || *flagCPU || *flagGroupOnly {
		return false
	}
	return *flagOnly == "" || strings.Contains(","+*flagOnly+",", ",mariadb,") || strings.Contains(","+*flagOnly+",", ",galera,")
}

// galeraCase is one measured case: which nodes the writers go through.
type galeraCase struct {
	name  string
	nodes []int // writer w appends through nodes[w % len(nodes)]
	group bool
}

// galeraResult is what one case measured and verified.
type galeraResult struct {
	rate    float64 // acknowledged events per second
	acked   int
	retries int64  // transient errors Append retried (OnRetry calls)
	failed  int    // appends that failed after the retry budget (transient)
	failErr string // the first of them
	others  []string
	stored  int // events read back with ReadAll
	gaps    int // positions missing in 1..max
	dups    int // ids or positions read twice
	moved   int // acknowledged events not read back at their position
	load    string
	batches int64 // group-commit transactions (0 when off)
	// Per node: transient retries, failures after the budget, and the
	// node's Galera counters over the case (why the tries failed).
	nodeRetries []int64
	nodeFailed  []int
	nodeAcked   []int
	// Latencies of the acknowledged appends (retries included), sorted.
	latencies []time.Duration
	maxTries  int // the most tries one append (or batch) took

	wsrep []wsrepCounters
}

// galeraCell starts the cluster, runs every case and prints the figures;
// a cluster that cannot start is reported as skipped.
func galeraCell(ctx context.Context) {
	d, ok := builtin.Lookup("mariadb")
	if !ok {
		fmt.Printf("\n== galera: skipped: the mariadb dialect is not built in\n")
		return
	}
	c, err := harness.StartGalera(ctx, 3)
	var sk *harness.Skipped
	if errors.As(err, &sk) {
		fmt.Printf("\n== galera: skipped: %s\n", sk.Reason)
		return
	}
	if err != nil {
		fmt.Printf("\n== galera: error: %v\n", err)
		return
	}
	defer c.Close()
	// The catalogue linked in process, as for the other dialects (see the
	// package comment): the appends make no plugin call either way.
	loaded, err := plugin.InProcess(ctx, d)
	if err != nil {
		fmt.Printf("\n== galera: error: %v\n", err)
		return
	}
	tries := *flagGaleraTries
	if tries <= 0 {
		tries = eventstore.DefaultRetry.Attempts
	}
	fmt.Printf("\n== galera (%s), %d writers of single-event appends, %s per case, retry budget %d tries within %v\n",
		c.Source, *flagGaleraWriters, *flagGaleraTime, tries, eventstore.DefaultRetry.Budget)
	for _, g := range strings.Split(*flagGaleraGroup, ",") {
		group := strings.TrimSpace(g) == "on"
		var rates [2]float64
		for i, gc := range []galeraCase{
			{name: "(a) all through node 1", nodes: []int{0}, group: group},
			{name: "(b) round-robin, 3 nodes", nodes: []int{0, 1, 2}, group: group},
		} {
			r, err := runGaleraCase(ctx, c, loaded.Catalogue, gc)
			if err != nil {
				fmt.Printf("   group commit %-3s %s: error: %v\n", g, gc.name, err)
				continue
			}
			rates[i] = r.rate
			printGalera(g, gc, r)
		}
		if rates[0] > 0 {
			fmt.Printf("   group commit %-3s ratio (b)/(a): %.2f\n", g, rates[1]/rates[0])
		}
	}
}

func printGalera(group string, gc galeraCase, r galeraResult) {
	per := 0.0
	if r.acked > 0 {
		per = 1000 * float64(r.retries) / float64(r.acked)
	}
	fmt.Printf("   group commit %-3s %-26s %7.0f ev/s  %6.1f transient retries per 1,000 appends (%d)  failed after the budget %d  (load %s)\n",
		group, gc.name, r.rate, per, r.retries, r.failed, r.load)
	if r.batches > 0 {
		fmt.Printf("   %20s %.1f appends per transaction (a retry retries the whole transaction)\n", "", float64(r.acked)/float64(r.batches))
	}
	fmt.Printf("   %20s read back: %d stored of %d acknowledged, %d gaps, %d duplicates, %d not at their acknowledged position\n",
		"", r.stored, r.acked, r.gaps, r.dups, r.moved)
	if r.failErr != "" {
		fmt.Printf("   %20s first failure after the budget: %s\n", "", r.failErr)
	}
	if n := len(r.latencies); n > 0 {
		pct := func(p float64) time.Duration {
			return r.latencies[min(n-1, int(p*float64(n)))].Round(100 * time.Microsecond)
		}
		fmt.Printf("   %20s append latency p50 %v p99 %v p99.9 %v max %v; most tries of one append %d\n",
			"", pct(0.5), pct(0.99), pct(0.999), r.latencies[n-1].Round(time.Millisecond), r.maxTries)
	}
	for i, w := range r.wsrep {
		fmt.Printf("   %20s node %d: %d acknowledged, %d retries, %d failed; %s\n", "", i+1, r.nodeAcked[i], r.nodeRetries[i], r.nodeFailed[i], w)
	}
	for i, o := range r.others {
		if i == 3 {
			fmt.Printf("   %20s … %d other errors in all\n", "", len(r.others))
			break
		}
		fmt.Printf("   %20s other error: %s\n", "", o)
	}
}

// galeraNodes opens one engine and store per node on an existing schema
// (every area verified, nothing created: DDL on Galera is cluster-wide and
// was run once through node 1). The advancer runs on node 1's store.
type galeraNodes struct {
	dbs    []*sql.DB
	es     []*engine.Engine
	stores []*eventstore.Store
}

func (n *galeraNodes) close() {
	for _, e := range n.es {
		e.Close()
	}
	for _, db := range n.dbs {
		db.Close()
	}
}

func openGaleraNodes(ctx context.Context, c *harness.GaleraCluster, cat dialect.Catalogue, name string,
	gc galeraCase, retries []atomic.Int64, maxTries *atomic.Int64) (*galeraNodes, *hwm.Advancer, error) {
	n := &galeraNodes{}
	modes := map[dialect.Area]schema.Mode{}
	for _, a := range []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging,
		dialect.AreaCQRS, dialect.AreaSaga, dialect.AreaPublication} {
		modes[a] = schema.Never
	}
	var adv *hwm.Advancer
	for i := range c.Nodes {
		retry := eventstore.WithRetry(eventstore.Retry{Attempts: *flagGaleraTries, Max: *flagGaleraMax,
			OnRetry: func(attempt int, _ error) {
				retries[i].Add(1)
				for m := maxTries.Load(); int64(attempt+2) > m && !maxTries.CompareAndSwap(m, int64(attempt+2)); m = maxTries.Load() {
				}
			}})
		var extra []string
		if *flagGaleraDSN != "" {
			extra = append(extra, *flagGaleraDSN)
		}
		db, err := sql.Open("mysql", c.Nodes[i].DSN(name, extra...))
		if err != nil {
			n.close()
			return nil, nil, err
		}
		db.SetMaxOpenConns(2 * *flagGaleraWriters)
		db.SetMaxIdleConns(2 * *flagGaleraWriters)
		n.dbs = append(n.dbs, db)
		e, err := openReplicated(ctx, db, cat, engine.Config{Modes: modes})
		if err != nil {
			n.close()
			return nil, nil, fmt.Errorf("node %d: %w", i+1, err)
		}
		n.es = append(n.es, e)
		opts := []eventstore.Option{retry, eventstore.WithGroupCommit(gc.group)}
		if i == 0 {
			adv = hwm.New(e, hwm.Options{PollInterval: *flagPoll})
			n.stores = append(n.stores, eventstore.New(e, adv, opts...))
			continue
		}
		// nil itself, not a nil *hwm.Advancer: the store tests its
		// nudger interface against nil.
		n.stores = append(n.stores, eventstore.New(e, nil, opts...))
	}
	return n, adv, nil
}

// openReplicated opens an engine on a node that may not have applied the
// schema node 1 just created yet (DDL replicates in total order but
// applies on each node in its own time: an open on node 2 right after
// found a table missing, reported either way: engine.ErrSchemaMissing or,
// from the schema check of an area switched off, schema.ErrMissingTable):
// it tries again while a table is missing, for at
// most 30 s (a hang guard).
func openReplicated(ctx context.Context, db *sql.DB, cat dialect.Catalogue, cfg engine.Config) (*engine.Engine, error) {
	guard := time.Now().Add(30 * time.Second)
	for {
		e, err := engine.Open(ctx, db, cat, cfg)
		missing := errors.Is(err, engine.ErrSchemaMissing) || errors.Is(err, schema.ErrMissingTable)
		if err == nil || !missing || time.Now().After(guard) {
			return e, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runGaleraCase runs one case on a database of its own and verifies it.
func runGaleraCase(ctx context.Context, c *harness.GaleraCluster, cat dialect.Catalogue, gc galeraCase) (galeraResult, error) {
	name, err := c.CreateDatabase(ctx)
	if err != nil {
		return galeraResult{}, err
	}
	// The verifier reads through node 1 and waits for every write the
	// cluster committed (wsrep_sync_wait=1); it also creates the schema.
	check, err := sql.Open("mysql", c.Nodes[0].DSN(name, "wsrep_sync_wait=1"))
	if err != nil {
		return galeraResult{}, err
	}
	defer check.Close()
	ce, err := engine.Open(ctx, check, cat, engine.Config{})
	if err != nil {
		return galeraResult{}, fmt.Errorf("creating the schema through node 1: %w", err)
	}
	defer ce.Close()
	retries := make([]atomic.Int64, len(c.Nodes))
	var maxTries atomic.Int64
	nodes, adv, err := openGaleraNodes(ctx, c, cat, name, gc, retries, &maxTries)
	if err != nil {
		return galeraResult{}, err
	}
	defer nodes.close()
	before := readWsrepAll(ctx, nodes.dbs)
	runCtx, stop := context.WithCancel(ctx)
	advDone := make(chan struct{})
	go func() { defer close(advDone); _ = adv.Run(runCtx) }()
	defer func() { stop(); <-advDone }()

	res, acked := galeraWrite(ctx, nodes.stores, gc)
	res.wsrep = diffWsrep(before, readWsrepAll(ctx, nodes.dbs))
	res.maxTries = int(maxTries.Load())
	for i := range retries {
		res.nodeRetries = append(res.nodeRetries, retries[i].Load())
		res.retries += retries[i].Load()
	}
	for _, s := range nodes.stores {
		res.batches += s.GroupCommitStats().Batches
	}
	res.load = loadAvg()
	return res, galeraVerify(ctx, eventstore.New(ce, nil), check, ce, acked, &res)
}

// galeraWrite runs the writers for *flagGaleraTime and returns the
// acknowledged events (id → position).
func galeraWrite(ctx context.Context, stores []*eventstore.Store, gc galeraCase) (galeraResult, map[string]int64) {
	res := galeraResult{nodeFailed: make([]int, len(stores)), nodeAcked: make([]int, len(stores))}
	var mu sync.Mutex
	acked := map[string]int64{}
	deadline := time.Now().Add(*flagGaleraTime)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < *flagGaleraWriters; w++ {
		node := gc.nodes[w%len(gc.nodes)]
		store := stores[node]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				id := uuid.NewString()
				began := time.Now()
				a, err := store.Append(ctx, eventstore.Stream{AggregateType: "bench.Account",
					AggregateID: fmt.Sprintf("acc-%d", rand.IntN(galeraStreams)),
					Events:      []eventstore.Event{{ID: id, Type: "bench.Deposited", Payload: payload}}})
				mu.Lock()
				switch {
				case err == nil:
					acked[id] = a.Positions[0]
					res.latencies = append(res.latencies, time.Since(began))
					res.nodeAcked[node]++
				case errors.Is(err, sqlerr.ErrTransient):
					res.nodeFailed[node]++
					if res.failed++; res.failed == 1 {
						res.failErr = err.Error()
					}
				case eventstore.IsConflict(err):
					// an Any append cannot conflict for long; not counted
				default:
					res.others = append(res.others, err.Error())
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(res.latencies)
	res.acked = len(acked)
	res.rate = float64(len(acked)) / time.Since(start).Seconds()
	return res, acked
}

// galeraVerify waits for the mark to reach every stored event, reads them
// all back with ReadAll through node 1, and counts gaps, duplicates and
// acknowledged events missing or moved.
func galeraVerify(ctx context.Context, store *eventstore.Store, check *sql.DB, e *engine.Engine, acked map[string]int64, res *galeraResult) error {
	var count int64
	if err := check.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+e.Names.Shared["event_store_table"]).Scan(&count); err != nil {
		return err
	}
	guard := time.Now().Add(60 * time.Second) // a hang guard, not a measurement
	for {
		mark, err := store.Mark(ctx)
		if err == nil && mark >= count {
			break
		}
		if time.Now().After(guard) {
			return fmt.Errorf("the mark is %d (%v) after 60 s, %d events stored", mark, err, count)
		}
		time.Sleep(50 * time.Millisecond)
	}
	seenID := map[string]int64{}
	seenPos := map[int64]bool{}
	var maxPos int64
	for after := int64(0); ; {
		page, err := store.ReadAll(ctx, after, 1000)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			if _, dup := seenID[r.ID]; dup || seenPos[r.GlobalPosition] {
				res.dups++
			}
			seenID[r.ID], seenPos[r.GlobalPosition] = r.GlobalPosition, true
			maxPos = max(maxPos, r.GlobalPosition)
		}
		after = page[len(page)-1].GlobalPosition
	}
	res.stored = len(seenID)
	for p := int64(1); p <= maxPos; p++ {
		if !seenPos[p] {
			res.gaps++
		}
	}
	for id, pos := range acked {
		if got, ok := seenID[id]; !ok || got != pos {
			res.moved++
		}
	}
	return nil
}
