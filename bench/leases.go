package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/lease"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
)

// The lease cells of issue 11: how long the partitions of a consumer go
// without a live owner after kill -9 of one of the instances holding them
// (here), and the throughput of one leased consumer over 1, 2 and 3
// instances (lease_scaling.go).
// Each instance is a separate OS process (this binary re-executed with
// leaseWorkerEnv set) that runs only a lease.Coordinator, as the
// conformance workers do; the parent reads the ownership rows.
var (
	flagLeases      = flag.Bool("leases", true, "run the lease cells (failover: kill -9 of 1 of 3 lease-holding processes; scaling: 1, 2, 3 leased instances)")
	flagLeasesOnly  = flag.Bool("leases-only", false, "run only the lease cells (failover, scaling)")
	flagLeaseKills  = flag.Int("lease-kills", 5, "kills of the lease failover cell")
	flagLeaseBeat   = flag.Duration("lease-heartbeat", lease.DefaultHeartbeatInterval, "HeartbeatInterval of the lease processes")
	flagLeaseRebal  = flag.Duration("lease-rebalance", lease.DefaultRebalanceInterval, "RebalanceInterval of the lease processes")
	flagLeaseLength = flag.Duration("lease-duration", lease.DefaultLeaseDuration, "LeaseDuration of the lease processes")
)

// leaseWorkerEnv carries a leaseWorkerJob (JSON) to a re-executed bench
// process: it then runs a lease coordinator instead of the bench.
const leaseWorkerEnv = "TIDEMARK_BENCH_LEASE_WORKER"

// Shape of the failover cell: 3 instances over 16 partitions (issue 11's
// bench), a consumer of the bench's own type.
const (
	leaseInstances  = 3
	leasePartitions = 16
	leaseConsumer   = "failover"
	// leasePoll is how often the parent reads the ownership rows while it
	// waits: 20 ms resolves the seconds measured without loading the
	// shared 2-core machine.
	leasePoll = 20 * time.Millisecond
)

type leaseWorkerJob struct {
	Dialect   string        `json:"dialect"`
	Driver    string        `json:"driver"`
	DSN       string        `json:"dsn"`
	Heartbeat time.Duration `json:"heartbeat"`
	Rebalance time.Duration `json:"rebalance"`
	Lease     time.Duration `json:"lease"`
	// Scaling: the process also runs the scaling cell's leased runner
	// (consumer Name, handler inserting into scalingTable) from "go" on.
	Scaling bool   `json:"scaling"`
	Name    string `json:"name"`
}

// maybeLeaseWorker runs the lease worker of leaseWorkerEnv and reports
// true, or returns false at once when the variable is not set.
func maybeLeaseWorker() bool {
	raw := os.Getenv(leaseWorkerEnv)
	if raw == "" {
		return false
	}
	if err := runLeaseWorker(raw); err != nil {
		fmt.Fprintln(os.Stderr, "lease worker:", err)
		os.Exit(1)
	}
	return true
}

// runLeaseWorker joins the consumer, prints "joined <instance>" and runs
// the coordinator until its stdin closes (then stops gracefully) or the
// process is killed.
func runLeaseWorker(raw string) error {
	var job leaseWorkerJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, ok := builtin.Lookup(job.Dialect)
	if !ok {
		return fmt.Errorf("dialect %q not built in", job.Dialect)
	}
	loaded, err := plugin.InProcess(ctx, d)
	if err != nil {
		return err
	}
	db, err := sql.Open(job.Driver, job.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	e, err := engine.Open(ctx, db, loaded.Catalogue, engine.Config{})
	if err != nil {
		return err
	}
	defer e.Close()
	co, err := lease.New(e, lease.Options{HeartbeatInterval: job.Heartbeat, RebalanceInterval: job.Rebalance, LeaseDuration: job.Lease,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	if job.Scaling {
		return runScalingWorker(ctx, e, co, job.Name)
	}
	if _, err := co.Join(ctx, lease.ConsumerOptions{Type: "bench", Name: leaseConsumer, Partitions: leasePartitions}); err != nil {
		return err
	}
	fmt.Println("joined", co.InstanceID())
	go func() { // the parent closing stdin is a graceful stop
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return co.Run(ctx)
}

// leaseProc is one running lease worker.
type leaseProc struct {
	id    string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startLeaseProc(ctx context.Context, job leaseWorkerJob) (*leaseProc, error) {
	raw, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), leaseWorkerEnv+"="+string(raw))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	p := &leaseProc{cmd: cmd}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	id, ok := strings.CutPrefix(strings.TrimSpace(line), "joined ")
	if err != nil || !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("lease worker did not join (%q, %v): %s", line, err, stderr.String())
	}
	p.id = id
	return p, nil
}

// stop ends the worker gracefully (its leases released).
func (p *leaseProc) stop() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second): // a hang guard
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// owners reads the leases of consumer bench/name: the partitions each live instance
// holds (database clock), and how many partitions have a live owner.
func owners(ctx context.Context, e *engine.Engine, name string) (map[string]int, int, error) {
	st, err := lease.Status(ctx, e, "bench", name)
	if err != nil {
		return nil, 0, err
	}
	held, n := map[string]int{}, 0
	for _, l := range st {
		if l.Live && l.Owner != "" {
			held[l.Owner]++
			n++
		}
	}
	return held, n, nil
}

// waitLeases polls the ownership rows of consumer bench/name until ok holds; the deadline is a
// hang guard, not a measurement.
func waitLeases(ctx context.Context, e *engine.Engine, name, what string, ok func(held map[string]int, n int) bool) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		held, n, err := owners(ctx, e, name)
		if err != nil {
			return err
		}
		if ok(held, n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: still %v (%d of %d owned)", what, held, n, leasePartitions)
		}
		time.Sleep(leasePoll)
	}
}

// leaseFailover runs the lease cells of one dialect: failover, then
// scaling (each on its own fresh database).
func leaseFailover(ctx context.Context, tg target, fresh func() (*bench, string, error)) error {
	if err := failoverCell(ctx, tg, fresh); err != nil {
		return err
	}
	return leaseScaling(ctx, tg, fresh)
}

// failoverCell is the failover cell of one dialect: 3 lease processes over
// 16 partitions; *flagLeaseKills times kill -9 one that holds partitions,
// time until every partition has a live owner again, start a replacement.
func failoverCell(ctx context.Context, tg target, fresh func() (*bench, string, error)) error {
	b, dsn, err := fresh()
	if err != nil {
		return err
	}
	defer b.close()
	job := leaseWorkerJob{Dialect: tg.dialect, Driver: tg.driver, DSN: dsn, Heartbeat: *flagLeaseBeat, Rebalance: *flagLeaseRebal, Lease: *flagLeaseLength}
	procs := map[string]*leaseProc{}
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	var took []time.Duration
	for kill := 0; kill <= *flagLeaseKills; kill++ {
		for len(procs) < leaseInstances {
			p, err := startLeaseProc(ctx, job)
			if err != nil {
				return err
			}
			procs[p.id] = p
		}
		// Steady: every instance holds a share and every partition a live
		// owner (a joiner's share needs up to two rebalances).
		if err := waitLeases(ctx, b.e, leaseConsumer, "3 instances sharing 16 partitions", func(held map[string]int, n int) bool {
			return len(held) == leaseInstances && n == leasePartitions
		}); err != nil {
			return err
		}
		if kill == *flagLeaseKills {
			break
		}
		victim := pickVictim(procs, kill)
		start := time.Now()
		_ = victim.cmd.Process.Kill() // kill -9
		_ = victim.cmd.Wait()
		delete(procs, victim.id)
		if err := waitLeases(ctx, b.e, leaseConsumer, "the killed instance's partitions to move", func(held map[string]int, n int) bool {
			return held[victim.id] == 0 && n == leasePartitions
		}); err != nil {
			return err
		}
		took = append(took, time.Since(start))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if len(took) == 0 {
		return errors.New("no kill measured")
	}
	fmt.Printf("   leases  kill -9 of 1 of %d processes → all %d partitions live-owned again: median %.2f s, max %.2f s (%d kills; "+
		"lease %s, rebalance %s, heartbeat %s; expected ≤ lease + rebalance = %s)\n",
		leaseInstances, leasePartitions, took[len(took)/2].Seconds(), took[len(took)-1].Seconds(), len(took),
		*flagLeaseLength, *flagLeaseRebal, *flagLeaseBeat, *flagLeaseLength+*flagLeaseRebal)
	return nil
}

// pickVictim is the kill-th process in id order: kills rotate over the
// instances rather than always hitting the same rank.
func pickVictim(procs map[string]*leaseProc, kill int) *leaseProc {
	ids := make([]string, 0, len(procs))
	for id := range procs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return procs[ids[kill%len(ids)]]
}
