// Command bench measures Tidemark against a plain-INSERT baseline, side by
// side in one run, on every dialect this machine can run (`make bench`).
//
// Every figure is a ratio measured in the same round: tidemark / baseline,
// where the baseline inserts identical rows into an identical table with the
// same driver, transaction shape and prepare mode, but no position
// allocation, no version check and no mark. Rounds alternate the two sides;
// the report gives the median and the min–max of the per-round ratios.
//
// The catalogue is linked in process here (plugin.InProcess): the hot path
// makes no plugin call, so out-of-process loading changes nothing measured.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
	_ "github.com/tidemarkdb/tidemark/plugins/builtin/drivers"
)

type target struct{ dialect, engine, driver string }

// allTargets are the registry's rows marked for the bench, in its order.
var allTargets = func() []target {
	var out []target
	for _, t := range builtin.Targets() {
		if t.Bench {
			out = append(out, target{t.Dialect, t.Engine, t.Driver})
		}
	}
	return out
}()

var (
	flagOnly     = flag.String("only", "", "comma-separated dialects (default: all runnable)")
	flagRounds   = flag.Int("rounds", 5, "rounds per cell (each round measures both sides)")
	flagCell     = flag.Duration("cell", 700*time.Millisecond, "duration of one side of one round")
	flagBig      = flag.Int("big", 1000000, "stored events for the large-table append latency (0 to skip)")
	flagReadRows = flag.Int("read-rows", 50000, "events for the catch-up read comparison")
	flagPage     = flag.Int("page", 5000, "page size of the catch-up read (FollowOptions.PageSize)")
	flagPoll     = flag.Duration("poll", 100*time.Millisecond, "high-water-mark poll interval for the tail latency")
	flagCoalesce = flag.Duration("coalesce", 0, "hwm.Options.Coalesce of the bench's advancers (0: the advancer's default)")
	flagProfile  = flag.String("cpuprofile", "", "write a CPU profile of the whole run")
	flagMemProf  = flag.String("memprofile", "", "write an allocation profile of the whole run at its end")
	flagStmts    = flag.Bool("stmts-only", false, "measure only the statements per append")
	flagCPU      = flag.Bool("cpu-only", false, "measure only the statements per append and Follow's client cost per event")
)

func main() {
	if maybeLeaseWorker() { // a re-executed lease process of the failover cell
		return
	}
	flag.Parse()
	if *flagProfile != "" {
		f, err := os.Create(*flagProfile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	if *flagMemProf != "" {
		defer writeAllocs(*flagMemProf)
	}
	ctx := context.Background()
	prov := harness.NewProvider()
	defer prov.Close()
	fmt.Printf("Tidemark benchmark — %s, %d rounds × %s per side per cell; ratio = tidemark / baseline (median [min–max])\n",
		time.Now().UTC().Format(time.RFC3339), *flagRounds, *flagCell)
	fmt.Printf("load average at the start: %s (2-core machine shared with the database servers)\n", loadAvg())
	defer func() { fmt.Printf("\nload average at the end: %s\n", loadAvg()) }()
	if *flagGaleraOnly {
		galeraCell(ctx)
		return
	}
	for _, tg := range allTargets {
		if *flagOnly != "" && !strings.Contains(","+*flagOnly+",", ","+tg.dialect+",") {
			continue
		}
		d, ok := builtin.Lookup(tg.dialect)
		if !ok {
			fmt.Printf("\n== %s: skipped: dialect not built in yet\n", tg.dialect)
			continue
		}
		db, err := prov.Open(ctx, tg.engine, tg.driver)
		var sk *harness.Skipped
		if errors.As(err, &sk) {
			fmt.Printf("\n== %s: skipped: %s\n", tg.dialect, sk.Reason)
			continue
		}
		if err != nil {
			fmt.Printf("\n== %s: error: %v\n", tg.dialect, err)
			continue
		}
		fmt.Printf("\n== %s (%s, driver %s) — %s\n", tg.dialect, db.Source, tg.driver, db.Note)
		if err := runDialect(ctx, prov, tg, d); err != nil {
			fmt.Printf("   error: %v\n", err)
		}
	}
	if galeraAfterDialects() {
		galeraCell(ctx)
	}
}

func runDialect(ctx context.Context, prov *harness.Provider, tg target, d dialect.Dialect) error {
	loaded, err := plugin.InProcess(ctx, d)
	if err != nil {
		return err
	}
	c := cells{prov: prov, tg: tg, cat: loaded.Catalogue}
	if handled, err := c.runOnly(ctx); handled {
		return err
	}
	if err := c.appendCells(ctx); err != nil {
		return err
	}
	gb, err := c.fresh(ctx)
	if err != nil {
		return err
	}
	groupCommitCell(ctx, gb)
	gb.close()
	if err := c.exactCells(ctx); err != nil {
		return err
	}
	sdb, err := prov.Open(ctx, tg.engine, tg.driver)
	if err != nil {
		return err
	}
	if err := statementsPerAppend(ctx, c.cat, tg.driver, sdb.DSN); err != nil {
		return err
	}
	if err := c.readCells(ctx); err != nil {
		return err
	}
	if *flagConsumers {
		if err := runConsumerCells(ctx, prov, tg, c.freshDSNFunc(ctx)); err != nil {
			return err
		}
	}
	if *flagLeases {
		return leaseFailover(ctx, tg, c.freshDSNFunc(ctx))
	}
	return nil
}

// cells is what the cells of one dialect share: where fresh databases come
// from, and the dialect's catalogue.
type cells struct {
	prov *harness.Provider
	tg   target
	cat  dialect.Catalogue
}

// freshDSN opens a fresh database and a bench on it.
func (c cells) freshDSN(ctx context.Context) (*bench, string, error) {
	db, err := c.prov.Open(ctx, c.tg.engine, c.tg.driver)
	if err != nil {
		return nil, "", err
	}
	b, err := newBench(ctx, c.cat, c.tg.driver, db.DSN)
	return b, db.DSN, err
}

// freshDSNFunc is freshDSN in the form the consumer and lease cells take.
func (c cells) freshDSNFunc(ctx context.Context) func() (*bench, string, error) {
	return func() (*bench, string, error) { return c.freshDSN(ctx) }
}

// freshCounted is a bench on a fresh database whose statements counts counts.
func (c cells) freshCounted(ctx context.Context, counts *sqlcount.Counts) (*bench, error) {
	db, err := c.prov.Open(ctx, c.tg.engine, c.tg.driver)
	if err != nil {
		return nil, err
	}
	sdb, err := sqlcount.Open(c.tg.driver, db.DSN, counts)
	if err != nil {
		return nil, err
	}
	return newBenchDB(ctx, c.cat, c.tg.driver, sdb)
}

// fresh is a bench on a fresh database.
func (c cells) fresh(ctx context.Context) (*bench, error) {
	b, _, err := c.freshDSN(ctx)
	return b, err
}

// runOnly runs the one cell a -*-only flag asks for; handled is false when
// no such flag is set.
func (c cells) runOnly(ctx context.Context) (handled bool, err error) {
	switch {
	case *flagLeasesOnly:
		return true, leaseFailover(ctx, c.tg, c.freshDSNFunc(ctx))
	case *flagConsumersOnly:
		return true, runConsumerCells(ctx, c.prov, c.tg, c.freshDSNFunc(ctx))
	case *flagStmts || *flagCPU:
		db, err := c.prov.Open(ctx, c.tg.engine, c.tg.driver)
		if err != nil {
			return true, err
		}
		if err := statementsPerAppend(ctx, c.cat, c.tg.driver, db.DSN); err != nil || *flagStmts {
			return true, err
		}
		b, err := c.fresh(ctx)
		if err != nil {
			return true, err
		}
		defer b.close()
		if err := b.load(ctx, min(*flagReadRows, 20000)); err != nil {
			return true, err
		}
		return true, b.followCPU(ctx)
	case *flagGroupTrace:
		db, err := c.prov.Open(ctx, c.tg.engine, c.tg.driver)
		if err != nil {
			return true, err
		}
		return true, groupTrace(ctx, c.cat, c.tg.driver, db.DSN)
	case *flagExactOnly:
		return true, c.exactCells(ctx)
	case *flagGroupOnly:
		b, err := c.fresh(ctx)
		if err != nil {
			return true, err
		}
		defer b.close()
		groupCommitCell(ctx, b)
		return true, nil
	}
	return false, nil
}

// appendCells measures appends of 1 and 100 events by 1, 4 and 16 writers
// against the raw INSERT baseline, each cell on a fresh database.
func (c cells) appendCells(ctx context.Context) error {
	for _, batch := range []int{1, 100} {
		for _, writers := range []int{1, 4, 16} {
			b, err := c.fresh(ctx)
			if err != nil {
				return err
			}
			var ratios, cpuRatios, tmCPU, blCPU []float64
			var tmRate, blRate float64
			for r := 0; r < *flagRounds; r++ {
				bl, blc := b.appendRate(ctx, writers, batch, true)
				tm, tmc := b.appendRate(ctx, writers, batch, false)
				ratios, cpuRatios = append(ratios, tm/bl), append(cpuRatios, tmc/blc)
				tmCPU, blCPU = append(tmCPU, tmc), append(blCPU, blc)
				tmRate, blRate = tmRate+tm, blRate+bl
			}
			b.close()
			n := float64(*flagRounds)
			fmt.Printf("   append  %3d writers × %3d-event tx: %8.0f ev/s vs baseline %8.0f ev/s  ratio %s; client CPU %.1f vs %.1f µs/event, ratio %s\n",
				writers, batch, tmRate/n, blRate/n, summary(ratios), median(tmCPU), median(blCPU), summary(cpuRatios))
		}
	}
	return nil
}

// readCells measures catch-up reads, Follow's client cost, the snapshot-safe
// read, the tail latency and the append latency as the table grows, on one
// fresh database.
func (c cells) readCells(ctx context.Context) error {
	b, err := c.fresh(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	readRows := *flagReadRows
	if (c.tg.dialect == "h2" || c.tg.dialect == "hsqldb") && readRows > 10000 {
		readRows = 10000 // in-memory CLOBs: keep the JVM heap out of the measurement
	}
	if err := b.readComparison(ctx, readRows); err != nil {
		return err
	}
	if err := b.followCPU(ctx); err != nil {
		return err
	}
	if err := b.snapshotCost(ctx, readRows); err != nil {
		return err
	}
	if err := b.tailLatency(ctx, 4, 2*time.Second); err != nil {
		return err
	}
	big := *flagBig
	if big <= 0 {
		return nil
	}
	if jvmCap := map[string]int{"h2": 100000, "hsqldb": 50000}[c.tg.dialect]; jvmCap > 0 && big > jvmCap {
		// In-memory JVM databases behind the bridge load ~3–20k events/s
		// and keep every CLOB on the heap: a million would take minutes
		// and measure the JVM heap (HSQLDB ran out of it at 100k).
		big = jvmCap
		fmt.Printf("   (growth capped at %d stored events for in-memory %s)\n", big, c.tg.dialect)
	}
	return b.growthLatency(ctx, []int{10000, big})
}

func summary(r []float64) string {
	s := append([]float64(nil), r...)
	sort.Float64s(s)
	return fmt.Sprintf("%.2f [%.2f–%.2f]", s[len(s)/2], s[0], s[len(s)-1])
}

type bench struct {
	driver string
	db     *sql.DB
	e      *engine.Engine
	store  *eventstore.Store
	adv    *hwm.Advancer

	stmtMu sync.Mutex
	stmts  map[int]*sql.Stmt // baseline inserts by row count, on db
}

func newBench(ctx context.Context, cat dialect.Catalogue, driver, dsn string) (*bench, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	return newBenchDB(ctx, cat, driver, db)
}

// newBenchDB is newBench on an opened db (a counting one, say).
func newBenchDB(ctx context.Context, cat dialect.Catalogue, driver string, db *sql.DB) (*bench, error) {
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	if base, err := engine.Open(ctx, db, cat, engine.Config{Names: baselineNames()}); err != nil {
		return nil, err
	} else {
		base.Close()
	}
	e, err := engine.Open(ctx, db, cat, engine.Config{})
	if err != nil {
		return nil, err
	}
	adv := hwm.New(e, hwm.Options{PollInterval: *flagPoll, Coalesce: *flagCoalesce})
	return &bench{driver: driver, db: db, e: e, store: eventstore.New(e, adv), adv: adv}, nil
}

func (b *bench) close() {
	b.closeStmts()
	b.e.Close()
	if b.driver == "jdbcbridge" {
		// In-memory H2/HSQLDB databases live as long as the bridge's JVM:
		// drop each one when its cell is done.
		_, _ = b.db.Exec("SHUTDOWN")
	}
	b.db.Close()
}

func init() {
	if len(os.Args) > 1 && os.Args[1] == "-h" {
		flag.Usage()
	}
}

// writeAllocs writes the run's allocation profile to path (-memprofile).
func writeAllocs(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memprofile:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "memprofile:", err)
	}
}
