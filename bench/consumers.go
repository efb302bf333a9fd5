package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/plugins/postgres/pgwake"
)

var (
	flagConsumers      = flag.Bool("consumers", true, "run the consumer cells (throughput, latency, catch-up)")
	flagConsumersOnly  = flag.Bool("consumers-only", false, "run only the consumer cells")
	flagConsumerEvents = flag.Int("consumer-events", 1000000, "events of the consumer catch-up (capped for in-memory H2/HSQLDB)")
	flagConsumerTx     = flag.Int("consumer-tx-events", 20000, "events applied by the Transactional catch-up (one transaction each)")
	flagConsumerTput   = flag.Int("consumer-throughput-events", 50000, "events appended and consumed per throughput round")
	flagConsumerRounds = flag.Int("consumer-rounds", 3, "rounds of the consumer throughput and catch-up cells")
	flagLatencyRate    = flag.Int("latency-rate", 1000, "events per second of the commit→applied latency cell")
	flagLatencyTime    = flag.Duration("latency-duration", 5*time.Second, "duration of the commit→applied latency cell")
	flagLatencyWarmup  = flag.Duration("latency-warmup", time.Second, "paced appends of the latency cell before the measured ones (pools and caches filling)")
	flagConsumerCells  = flag.String("consumer-cells", "throughput,latency,catchup,projection,finders,saga", "which consumer cells to run")
	flagTrace          = flag.Bool("consumer-trace", false, "print where each consumer cell's polls spend their time")
	flagPeers          = flag.String("peers-dir", "bench/peers", "the watermill peer's module ('' skips watermill)")
)

// publishers and batch shape the throughput cell on both sides: 4
// goroutines appending (publishing) 100 single-event streams per call, so
// the producer is never the bottleneck (both sides insert >40k/s batched)
// and the consumer's keys spread over its workers.
const (
	publishers = 4
	pubBatch   = 100
)

// applied counts distinct applied positions, so a Transactional apply that
// rolled back and ran again is counted once; full is closed at want.
type applied struct {
	mu   sync.Mutex
	seen map[int64]time.Time
	want int
	full chan struct{}
}

func newApplied(want int) *applied {
	return &applied{seen: make(map[int64]time.Time, max(want, 0)), want: want, full: make(chan struct{})}
}

func (a *applied) add(pos int64) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.seen[pos]; ok {
		return
	}
	a.seen[pos] = now
	if len(a.seen) == a.want {
		close(a.full)
	}
}

// runConsumerCells runs every consumer cell of one dialect, each on a
// fresh database so earlier cells' rows do not count.
func runConsumerCells(ctx context.Context, prov *harness.Provider, tg target, fresh func() (*bench, string, error)) error {
	cells := []struct {
		name string
		run  func() error
	}{
		{"throughput", func() error { return consumerThroughput(ctx, prov, tg, fresh) }},
		{"latency", func() error { return consumerLatency(ctx, prov, tg, fresh) }},
		{"catchup", func() error { return consumerCatchUp(ctx, tg, fresh) }},
		{"projection", func() error { return projectionCell(ctx, tg, fresh) }},
		{"finders", func() error { return bigFinderCell(ctx, tg, fresh) }},
		{"saga", func() error { return sagaCell(ctx, fresh) }},
	}
	for _, c := range cells {
		if !strings.Contains(","+*flagConsumerCells+",", ","+c.name+",") {
			continue
		}
		if err := c.run(); err != nil {
			return fmt.Errorf("consumer %s: %w", c.name, err)
		}
	}
	return nil
}

// runnerKind is what a bench consumer's handler does: a no-op or one
// INSERT per message (in the apply's transaction when tx), and how many
// messages a Transactional apply commits at once (TxBatch; 0 or 1: one).
type runnerKind struct {
	tx    bool
	batch int
	write bool
}

func (k runnerKind) String() string {
	s := "runner"
	if k.tx {
		s += ", Transactional"
		if k.batch > 1 {
			s += fmt.Sprintf(" TxBatch %d", k.batch)
		}
	}
	if k.write {
		return s + ", INSERT per event"
	}
	return s + ", no-op"
}

// appliedTable holds the rows a writing handler inserts (the watermill
// peer's -write handler inserts the same shape).
const appliedTable = "bench_applied"

// createApplied creates appliedTable on b's database.
func createApplied(ctx context.Context, b *bench) error {
	_, err := b.db.ExecContext(ctx, "CREATE TABLE "+appliedTable+" (id VARCHAR(64) PRIMARY KEY, payload VARCHAR(200) NOT NULL)")
	return err
}

// insertApplied is the writing handler's statement in b's driver's
// placeholders.
func insertApplied(b *bench) string {
	if b.driver == "pgx" || b.driver == "postgres" {
		return "INSERT INTO " + appliedTable + " (id, payload) VALUES ($1, $2)"
	}
	return "INSERT INTO " + appliedTable + " (id, payload) VALUES (?, ?)"
}

// newRunner builds a consumer named name over b's event store whose
// handler records the position it applied and, for a writing kind,
// inserts a row (in the apply's transaction when Transactional).
func newRunner(ctx context.Context, b *bench, name string, kind runnerKind, waker eventstore.Waker, got *applied) (*consumer.Runner, *tracedSource, error) {
	src := &tracedSource{SourceOf: consumer.EventStore(b.store, waker)}
	var s consumer.SourceOf[eventstore.Recorded] = src.SourceOf
	if *flagTrace {
		s = src
	}
	ins := insertApplied(b)
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(b.e, nil), consumer.Options{
		Type: "bench", Name: name, Transactional: kind.tx, TxBatch: kind.batch,

		Routes: []consumer.Route{consumer.On(s, func(ctx context.Context, tx *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
			if kind.write {
				id, body := strconv.FormatInt(m.Position, 10), string(payload)
				var err error
				if tx != nil {
					_, err = tx.ExecContext(ctx, ins, id, body)
				} else {
					_, err = b.db.ExecContext(ctx, ins, id, body)
				}
				if err != nil {
					return err
				}
			}
			if got != nil {
				got.add(m.Position)
			}
			return nil
		})},
	})
	return r, src, err
}

// trace prints where a cell's polls went (-consumer-trace).
func trace(cell string, src *tracedSource, elapsed time.Duration) {
	if *flagTrace {
		fmt.Printf("     trace %s: %s\n", cell, src.report(elapsed))
	}
}

// stream is one stream of n events of a random aggregate: Tidemark's
// one-statement append (on PostgreSQL), as watermill's Publish of a batch
// is one INSERT. (An Append of 100 single-event streams runs per stream
// and appended ~5k ev/s with 4 writers: the producer, not the consumer,
// would have been measured.)
func stream(rng *rand.Rand, n int, typ string) eventstore.Stream {
	return streamOver(rng, n, typ, 1_000_000)
}

// streamOver is stream on one of ids aggregates.
func streamOver(rng *rand.Rand, n int, typ string, ids int) eventstore.Stream {
	evs := make([]eventstore.Event, n)
	for i := range evs {
		evs[i] = eventstore.Event{Type: typ, Payload: payload}
	}
	return eventstore.Stream{AggregateType: "bench.Account", AggregateID: fmt.Sprintf("c-%d", rng.IntN(ids)), Events: evs}
}

// appendAll appends n events with publishers goroutines, pubBatch events
// of one stream per call.
func appendAll(ctx context.Context, b *bench, n int) error {
	return appendStreams(ctx, b, n, pubBatch)
}

// appendStreams appends n events with publishers goroutines, per events of
// one stream (one aggregate, so one partition) per call.
func appendStreams(ctx context.Context, b *bench, n, per int) error {
	return appendStreamsOver(ctx, b, n, per, 1_000_000)
}

// appendStreamsOver is appendStreams on aggregates drawn from ids.
func appendStreamsOver(ctx context.Context, b *bench, n, per, ids int) error {
	var next atomic.Int64
	errs := make(chan error, publishers)
	for w := range publishers {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for {
				from := next.Add(int64(per)) - int64(per)
				if from >= int64(n) {
					errs <- nil
					return
				}
				k := int(min(int64(per), int64(n)-from))
				for {
					_, err := b.store.Append(ctx, streamOver(rng, k, "bench.Deposited", ids))
					if err == nil {
						break
					}
					if !eventstore.IsConflict(err) {
						errs <- err
						return
					}
				}
			}
		}()
	}
	var first error
	for range publishers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// tidemarkThroughput appends n events while one runner of kind consumes
// them and returns n / (first append → last apply).
func tidemarkThroughput(ctx context.Context, b *bench, n int, kind runnerKind, kindNo, round int) (float64, error) {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	if kind.write {
		if err := createApplied(ctx, b); err != nil {
			return 0, err
		}
	}
	advDone := make(chan struct{})
	go func() { defer close(advDone); _ = b.adv.Run(rctx) }()
	got := newApplied(n)
	r, src, err := newRunner(ctx, b, fmt.Sprintf("tput-%d-%d", kindNo, round), kind, b.adv, got)
	if err != nil {
		return 0, err
	}
	runDone := make(chan error, 1)
	go func() { runDone <- r.Run(rctx) }()
	start := time.Now()
	if err := appendAll(ctx, b, n); err != nil {
		return 0, err
	}
	select {
	case <-got.full:
	case err := <-runDone:
		return 0, fmt.Errorf("runner stopped: %w", err)
	case <-time.After(10 * time.Minute): // hang guard
		return 0, fmt.Errorf("applied %d of %d in 10 minutes", len(got.seen), n)
	}
	rate := float64(n) / time.Since(start).Seconds()
	trace(fmt.Sprintf("throughput %s", kind), src, time.Since(start))
	stop()
	<-runDone
	<-advDone
	return rate, nil
}

// throughputKinds are the runners the throughput cell measures, each
// against the watermill handler of the same kind (peerOf). The plain
// runner writing in its own autocommit is watermill's writing handler's
// shape (its INSERT outside the ack's transaction: at least once).
var throughputKinds = []runnerKind{
	{}, {write: true}, {tx: true}, {tx: true, batch: 256},
	{tx: true, write: true}, {tx: true, batch: 256, write: true},
}

// peerRuns are the watermill-sql subscribers of the throughput cell: a
// no-op handler at a 10 ms poll and at watermill-sql's default (1 s), and
// an INSERT per message (outside watermill's ack transaction) at 10 ms.
var peerRuns = []struct {
	label string
	poll  time.Duration
	write bool
}{{"no-op, poll 10ms", 10 * time.Millisecond, false}, {"no-op, default poll", 0, false}, {"INSERT per message, poll 10ms", 10 * time.Millisecond, true}}

func consumerThroughput(ctx context.Context, prov *harness.Provider, tg target, fresh func() (*bench, string, error)) error {
	n := *flagConsumerTput
	if tg.dialect == "hsqldb" || tg.dialect == "h2" {
		n = min(n, 20000) // in-memory JVM engines: keep the heap out of it
	}
	rounds := *flagConsumerRounds
	tm := make([]float64, len(throughputKinds))
	wm := make([]float64, len(peerRuns))
	ratios := make([][]float64, len(throughputKinds)) // vs the same-kind peer at 10 ms
	for round := range rounds {
		w := make([]float64, len(peerRuns))
		for i, pr := range peerRuns {
			peer, err := watermill(ctx, prov, tg, peerArgs{mode: "throughput", events: n, poll: pr.poll, write: pr.write})
			if err != nil {
				fmt.Printf("   (watermill %s: %v)\n", pr.label, err)
			} else if peer != nil {
				w[i] = peer.Rate
				wm[i] += peer.Rate
			}
		}
		for i, kind := range throughputKinds {
			b, _, err := fresh()
			if err != nil {
				return err
			}
			rate, err := tidemarkThroughput(ctx, b, n, kind, i, round)
			b.close()
			if err != nil {
				return err
			}
			tm[i] += rate
			if peer := w[peerOf(kind)]; peer > 0 {
				ratios[i] = append(ratios[i], rate/peer)
			}
		}
	}
	k := float64(rounds)
	for i, kind := range throughputKinds {
		if len(ratios[i]) == 0 {
			fmt.Printf("   consumer append→applied, %d events, 1 consumer, %s: %8.0f ev/s (no watermill adapter)\n", n, kind, tm[i]/k)
			continue
		}
		fmt.Printf("   consumer append→applied, %d events, 1 consumer, %s: %8.0f ev/s vs watermill-sql %s %8.0f msg/s  ratio %s (target ≥ 2)\n",
			n, kind, tm[i]/k, peerRuns[peerOf(kind)].label, wm[peerOf(kind)]/k, summary(ratios[i]))
	}
	if wm[1] > 0 {
		fmt.Printf("   watermill-sql no-op at its default poll: %8.0f msg/s (at 10ms: %8.0f)\n", wm[1]/k, wm[0]/k)
	}
	return nil
}

// peerOf is the peerRuns index a runner kind is compared with.
func peerOf(kind runnerKind) int {
	if kind.write {
		return 2
	}
	return 0
}

// tidemarkLatency appends single events at rate for d and returns the
// commit→applied latencies. On PostgreSQL the runner wakes on pgwake's
// LISTEN (the advancer's pg_notify), elsewhere on the local advancer.
//
// mode "follow" reads with Store.Follow woken by the same waker instead:
// the same run's floor (append, advancer, wake-up, one read) under the
// machine's load, against which the runner's extra cost shows;
// "follow-local" is Follow woken by the local advancer on PostgreSQL too
// (commit→readable in process).
func tidemarkLatency(ctx context.Context, b *bench, dsn, mode string) ([]time.Duration, string, error) {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	advDone := make(chan struct{})
	go func() { defer close(advDone); _ = b.adv.Run(rctx) }()
	waker, how, err := latencyWaker(rctx, b, dsn, mode == "follow-local")
	if err != nil {
		return nil, "", err
	}
	got := newApplied(-1)
	src := &tracedSource{}
	runDone := make(chan error, 1)
	if strings.HasPrefix(mode, "follow") {
		go func() {
			runDone <- b.store.Follow(rctx, 0, eventstore.FollowOptions{Waker: waker}, func(ev eventstore.Recorded) error {
				got.add(ev.GlobalPosition)
				return nil
			})
		}()
	} else {
		var r *consumer.Runner
		r, src, err = newRunner(ctx, b, "latency-"+mode, runnerKind{tx: mode == "runner-tx"}, waker, got)
		if err != nil {
			return nil, "", err
		}
		go func() { runDone <- r.Run(rctx) }()
	}
	// The cell measures the steady state: the paced appends begin once the
	// reader delivered a first event (its start-up — connections, LISTEN,
	// the consumer's rows — is not a commit→applied latency), and the
	// first -latency-warmup of them are not counted (the pools grow to the
	// rate's needs: a new PostgreSQL connection is a process start).
	warm, err := b.store.Append(ctx, stream(rand.New(rand.NewPCG(9, 9)), 1, "bench.Tail"))
	if err != nil {
		return nil, "", err
	}
	if !waitApplied(got, []int64{warm.Positions[0]}) {
		return nil, "", errors.New("the warm-up event was not applied within 2 minutes")
	}
	start := time.Now()
	committed, err := pacedAppends(ctx, b)
	if err != nil {
		return nil, "", err
	}
	// Wait until every committed event was applied (a runner slower than
	// the rate applies a backlog, which the latencies then show).
	positions := make([]int64, 0, len(committed))
	for p := range committed {
		positions = append(positions, p)
	}
	waitApplied(got, positions)
	if !strings.HasPrefix(mode, "follow") {
		trace("latency "+mode, src, time.Since(start))
	}
	stop()
	<-runDone
	<-advDone
	got.mu.Lock()
	defer got.mu.Unlock()
	var lat []time.Duration
	for pos, c := range committed {
		if s, ok := got.seen[pos]; ok {
			lat = append(lat, max(0, s.Sub(c)))
		}
	}
	if len(lat) < len(committed) {
		return nil, "", fmt.Errorf("applied %d of %d committed events", len(lat), len(committed))
	}
	return lat, how, nil
}

// waitApplied waits until got has every one of positions, with two
// minutes as a hang guard (false past it).
func waitApplied(got *applied, positions []int64) bool {
	for guard := time.Now().Add(2 * time.Minute); time.Now().Before(guard); time.Sleep(time.Millisecond) {
		got.mu.Lock()
		n := 0
		for _, p := range positions {
			if _, ok := got.seen[p]; ok {
				n++
			}
		}
		got.mu.Unlock()
		if n == len(positions) {
			return true
		}
	}
	return false
}

// latencyWaker is what wakes the latency cell's reader: pgwake's LISTEN
// on PostgreSQL (the cross-process path), the local advancer elsewhere or
// when local is set.
func latencyWaker(ctx context.Context, b *bench, dsn string, local bool) (eventstore.Waker, string, error) {
	if b.driver != "pgx" || local {
		return b.adv, "local advancer", nil
	}
	w := pgwake.Listen(ctx, dsn, "")
	select {
	case <-w.Ready():
		return w, "pgwake LISTEN/NOTIFY", nil
	case <-time.After(30 * time.Second):
		return nil, "", errors.New("pgwake: no LISTEN after 30 s")
	}
}

// pacedAppends appends one single-event stream every 1/-latency-rate for
// -latency-warmup and then -latency-duration, and returns when each
// position appended after the warm-up had its append returned.
func pacedAppends(ctx context.Context, b *bench) (map[int64]time.Time, error) {
	committed := map[int64]time.Time{}
	rng := rand.New(rand.NewPCG(7, 8))
	interval := time.Second / time.Duration(*flagLatencyRate)
	start := time.Now()
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= *flagLatencyWarmup+*flagLatencyTime {
			return committed, nil
		}
		time.Sleep(time.Until(at))
		res, err := b.store.Append(ctx, stream(rng, 1, "bench.Tail"))
		if err != nil {
			if eventstore.IsConflict(err) {
				continue
			}
			return nil, err
		}
		if at.Sub(start) >= *flagLatencyWarmup {
			committed[res.Positions[0]] = time.Now()
		}
	}
}

func consumerLatency(ctx context.Context, prov *harness.Provider, tg target, fresh func() (*bench, string, error)) error {
	modes := []string{"follow", "runner", "runner-tx"}
	if tg.driver == "pgx" {
		modes = append([]string{"follow-local"}, modes...)
	}
	for _, mode := range modes {
		b, dsn, err := fresh()
		if err != nil {
			return err
		}
		lat, how, err := tidemarkLatency(ctx, b, dsn, mode)
		b.close()
		if err != nil {
			return err
		}
		p := percentiles(lat, 0.5, 0.99)
		what := map[string]string{"follow": "Follow (floor)", "follow-local": "Follow (in process)", "runner": "runner", "runner-tx": "runner, Transactional"}[mode]
		target := map[string]string{"follow": "; target p99 ≤ 5ms", "follow-local": "; target p99 ≤ 5ms", "runner": "; target p99 ≤ 10ms"}[mode]
		fmt.Printf("   consumer commit→applied at %d ev/s, %s, woken by %s: p50 %s  p99 %s  (n=%d%s)\n",
			*flagLatencyRate, what, how, ms(p[0]), ms(p[1]), len(lat), target)
	}
	peer, err := watermill(ctx, prov, tg, peerArgs{mode: "latency", poll: 10 * time.Millisecond})
	if err != nil {
		fmt.Printf("   (watermill: %v)\n", err)
	} else if peer != nil {
		fmt.Printf("   watermill-sql publish→received at %d msg/s, poll 10ms: p50 %.2fms  p99 %.2fms  (n=%d)\n",
			*flagLatencyRate, peer.P50Ms, peer.P99Ms, peer.Events)
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// catchUpEvents is the catch-up size for a dialect: in-memory H2 and
// HSQLDB keep every CLOB on the bridge JVM's heap (HSQLDB ran out of it at
// 100k in the growth cell), so they read 100k and 50k.
func catchUpEvents(dialect string) int {
	n := *flagConsumerEvents
	if jvmCap := map[string]int{"h2": 100000, "hsqldb": 50000}[dialect]; jvmCap > 0 {
		n = min(n, jvmCap)
	}
	return n
}

// loadSpread appends n events as the throughput cell does and publishes
// them.
func loadSpread(ctx context.Context, b *bench, n int) error {
	if err := appendAll(ctx, b, n); err != nil {
		return err
	}
	return b.publish(ctx)
}

// settle vacuums and analyzes a freshly loaded PostgreSQL database, so
// that autovacuum's pass over the new rows (and the hint bits it sets)
// does not fall into one side of a round: the first round ran at a
// quarter of the others while it did.
func settle(ctx context.Context, b *bench, tg target) error {
	if tg.dialect != "postgres" {
		return nil
	}
	if _, err := b.db.ExecContext(ctx, "VACUUM (ANALYZE)"); err != nil {
		return fmt.Errorf("settling the loaded database: %w", err)
	}
	return nil
}

// followRate reads every stored event with Follow and a no-op callback.
func followRate(ctx context.Context, b *bench, n int) (float64, error) {
	start := time.Now()
	got := 0
	errDone := errors.New("caught up")
	err := b.store.Follow(ctx, 0, eventstore.FollowOptions{}, func(eventstore.Recorded) error {
		got++
		if got == n {
			return errDone
		}
		return nil
	})
	if !errors.Is(err, errDone) {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// runnerRate polls a fresh consumer until it has applied at least limit
// events (or a poll applies nothing) and returns applied / elapsed.
func runnerRate(ctx context.Context, b *bench, name string, kind runnerKind, limit int) (float64, int, error) {
	r, src, err := newRunner(ctx, b, name, kind, nil, nil)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	defer func() { trace(name, src, time.Since(start)) }()
	total := 0
	for total < limit {
		n, err := r.Poll(ctx)
		if err != nil {
			return 0, total, err
		}
		if n == 0 {
			break
		}
		total += n
	}
	return float64(total) / time.Since(start).Seconds(), total, nil
}

func consumerCatchUp(ctx context.Context, tg target, fresh func() (*bench, string, error)) error {
	n := catchUpEvents(tg.dialect)
	b, _, err := fresh()
	if err != nil {
		return err
	}
	defer b.close()
	if err := loadSpread(ctx, b, n); err != nil {
		return err
	}
	if err := settle(ctx, b, tg); err != nil {
		return err
	}
	txN := min(n, *flagConsumerTx)
	var ratios, ratiosTx []float64
	var fr, rr, rtx float64
	rounds := *flagConsumerRounds
	for round := range rounds {
		f, err := followRate(ctx, b, n)
		if err != nil {
			return err
		}
		r, got, err := runnerRate(ctx, b, fmt.Sprintf("catchup-%d", round), runnerKind{}, n)
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("runner applied %d of %d events", got, n)
		}
		t, _, err := runnerRate(ctx, b, fmt.Sprintf("catchup-tx-%d", round), runnerKind{tx: true}, txN)
		if err != nil {
			return err
		}
		if *flagTrace {
			fmt.Printf("     round %d: Follow %.0f ev/s, runner %.0f ev/s\n", round, f, r)
		}
		ratios, ratiosTx = append(ratios, r/f), append(ratiosTx, t/f)
		fr, rr, rtx = fr+f, rr+r, rtx+t
	}
	k := float64(rounds)
	fmt.Printf("   consumer catch-up of %d events, no-op handler: runner %8.0f ev/s vs Follow %8.0f ev/s  ratio %s (target ≥ 0.8); Transactional (first %d) %8.0f ev/s  ratio %s\n",
		n, rr/k, fr/k, summary(ratios), txN, rtx/k, summary(ratiosTx))
	return nil
}
