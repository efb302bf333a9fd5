package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/lease"
)

// The scaling cell of issue 11: one Transactional consumer over the event
// store's 16 partitions, run by 1, 2 and 3 instances, each a separate OS
// process (this binary re-executed) with its own lease.Coordinator and
// runner. The events are appended before the instances start; the parent
// waits until the instances share the partitions, says "go" to all of them
// and times "go" → every position's row committed.
var (
	flagScalingEvents   = flag.Int("lease-scaling-events", 15000, "events pre-appended for each instance count of the lease scaling cell")
	flagScalingRounds   = flag.Int("lease-scaling-rounds", 3, "rounds of the lease scaling cell (each runs 1, 2 and 3 instances)")
	flagScalingDialects = flag.String("lease-scaling-dialects", "postgres,mariadb", "dialects the lease scaling cell runs on")
)

// scalingTable gets one row per apply, inserted by the handler in the
// apply's transaction. No key: a position applied twice would show as two
// rows, which the cell checks.
const scalingTable = "TM_BENCH_LEASE_APPLIED"

// scalingPoll is how often the parent counts the applied rows: 100 ms
// resolves the ≥ 5 s measured while a COUNT(*) of ≤ 15k rows stays cheap
// beside the instances on the 2-core machine.
const scalingPoll = 100 * time.Millisecond

// scalingStream is the events per appended stream: 15k events make 1,500
// aggregates, ~94 per partition, so the partitions carry near-equal work
// (a 3,000-event trial with 100-event streams gave 2 instances 2,100 and
// 900 rows).
const scalingStream = 10

// runScalingWorker runs the scaling cell's instance: its runner joins the
// coordinator (which runs from then on), "joined <instance>" is printed,
// the runner runs from the "go" line until stdin closes.
func runScalingWorker(ctx context.Context, e *engine.Engine, co *lease.Coordinator, name string) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	instance := co.InstanceID()
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), consumer.Options{
		Type: "bench", Name: name, Transactional: true, Leases: co, Logger: logger,

		Routes: []consumer.Route{consumer.On(consumer.EventStore(eventstore.New(e, nil), nil), func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			// Literal values: the bench's drivers differ in placeholders,
			// and these are integers and the coordinator's instance id.
			_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (pos, pno, instance_id) VALUES (%d, %d, '%s')`,
				scalingTable, m.Position, m.Partition, instance))
			return err
		})},
	})
	if err != nil {
		return err
	}
	coCtx, stopCo := context.WithCancel(ctx)
	coDone := make(chan error, 1)
	go func() { coDone <- co.Run(coCtx) }()
	defer func() { stopCo(); <-coDone }()
	fmt.Println("joined", instance)
	in := bufio.NewReader(os.Stdin)
	if l, err := in.ReadString('\n'); strings.TrimSpace(l) != "go" {
		return fmt.Errorf("want go, read %q (%v)", l, err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	go func() { // the parent closing stdin is a graceful stop
		_, _ = io.Copy(io.Discard, in)
		stopRun()
	}()
	if err := r.Run(runCtx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// scalingResult is one instance count's measurement.
type scalingResult struct {
	rate     float64
	rows     int   // rows in scalingTable
	distinct int   // distinct positions among them
	shares   []int // rows per instance, descending
	// cpu is the instances' user + system CPU over their whole life
	// (join, spread, apply, stop): how much of the 2 cores they took.
	cpu  time.Duration
	load string
}

// leaseScaling runs the scaling cell: rounds of 1, 2 and 3 instances in
// turn (so the machine's load drifts over all three alike), each instance
// count's rate compared with the same round's 1 instance.
func leaseScaling(ctx context.Context, tg target, fresh func() (*bench, string, error)) error {
	if !strings.Contains(","+*flagScalingDialects+",", ","+tg.dialect+",") {
		return nil
	}
	n, rounds := *flagScalingEvents, max(*flagScalingRounds, 1)
	rates := make([][]float64, leaseInstances+1)  // by instance count, by round
	ratios := make([][]float64, leaseInstances+1) // likewise, vs the round's 1 instance
	for round := range rounds {
		for k := 1; k <= leaseInstances; k++ {
			res, err := scalingRound(ctx, tg, fresh, k, n)
			if err != nil {
				return fmt.Errorf("lease scaling, %d instances: %w", k, err)
			}
			rates[k] = append(rates[k], res.rate)
			ratios[k] = append(ratios[k], res.rate/rates[1][round])
			fmt.Printf("     scaling round %d, %d instance(s): %6.0f ev/s, %d rows, %d distinct positions, rows per instance %v, "+
				"instances' CPU %.1f s (%.0f µs/event), load %s\n",
				round+1, k, res.rate, res.rows, res.distinct, res.shares, res.cpu.Seconds(), float64(res.cpu.Microseconds())/float64(n), res.load)
			if res.rows != n || res.distinct != n {
				return fmt.Errorf("lease scaling, %d instances: %d rows, %d distinct positions, want %d of each", k, res.rows, res.distinct, n)
			}
		}
	}
	for k := 1; k <= leaseInstances; k++ {
		sum := 0.0
		for _, r := range rates[k] {
			sum += r
		}
		fmt.Printf("   leases  scaling %d instance(s) × %d partitions, Transactional, %d events: %8.0f ev/s  ratio vs 1 instance %s (%d rounds; every position applied once)\n",
			k, leasePartitions, n, sum/float64(len(rates[k])), summary(ratios[k]), rounds)
	}
	return nil
}

// scalingRound measures k instances on a fresh database holding n events.
func scalingRound(ctx context.Context, tg target, fresh func() (*bench, string, error), k, n int) (scalingResult, error) {
	var res scalingResult
	b, dsn, err := fresh()
	if err != nil {
		return res, err
	}
	defer b.close()
	if _, err := b.db.ExecContext(ctx, `CREATE TABLE `+scalingTable+` (pos BIGINT NOT NULL, pno INT NOT NULL, instance_id VARCHAR(64) NOT NULL)`); err != nil {
		return res, err
	}
	// Streams of scalingStream events: a stream is one aggregate in one
	// partition, so the bench's usual 100-event streams put 150 lumps on
	// 16 partitions and an instance's share of the work follows the lumps.
	if err := appendStreams(ctx, b, n, scalingStream); err != nil {
		return res, err
	}
	if err := b.publish(ctx); err != nil {
		return res, err
	}
	name := fmt.Sprintf("scaling-%d", k)
	job := leaseWorkerJob{Dialect: tg.dialect, Driver: tg.driver, DSN: dsn, Heartbeat: *flagLeaseBeat, Rebalance: *flagLeaseRebal,
		Lease: *flagLeaseLength, Scaling: true, Name: name}
	var procs []*leaseProc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for range k {
		p, err := startLeaseProc(ctx, job)
		if err != nil {
			return res, err
		}
		procs = append(procs, p)
	}
	// Steady before "go": every instance holds its share (at most
	// ceil(16/k)) and every partition a live owner, so the rebalances of
	// the joins are not in the measured time.
	most := (leasePartitions + k - 1) / k
	if err := waitLeases(ctx, b.e, name, fmt.Sprintf("%d instances sharing %d partitions", k, leasePartitions), func(held map[string]int, owned int) bool {
		if len(held) != k || owned != leasePartitions {
			return false
		}
		for _, h := range held {
			if h > most {
				return false
			}
		}
		return true
	}); err != nil {
		return res, err
	}
	start := time.Now()
	for _, p := range procs {
		if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
			return res, err
		}
	}
	if err := waitRows(ctx, b.db, n); err != nil {
		return res, err
	}
	res.rate = float64(n) / time.Since(start).Seconds()
	res.load = loadAvg()
	for _, p := range procs {
		p.stop()
		if ps := p.cmd.ProcessState; ps != nil {
			res.cpu += ps.UserTime() + ps.SystemTime()
		}
	}
	procs = nil
	return res, countApplied(ctx, b.db, &res)
}

// waitRows polls until scalingTable holds n rows; the deadline is a hang
// guard, not a measurement.
func waitRows(ctx context.Context, db *sql.DB, n int) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var got int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+scalingTable).Scan(&got); err != nil {
			return err
		}
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d events applied in 10 minutes", got, n)
		}
		time.Sleep(scalingPoll)
	}
}

// countApplied reads the rows, the distinct positions and the rows per
// instance once every instance has stopped.
func countApplied(ctx context.Context, db *sql.DB, res *scalingResult) error {
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT pos) FROM `+scalingTable).Scan(&res.rows, &res.distinct); err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT instance_id, COUNT(*) FROM `+scalingTable+` GROUP BY instance_id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c int
		if err := rows.Scan(&id, &c); err != nil {
			return err
		}
		res.shares = append(res.shares, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(res.shares)))
	return rows.Err()
}
