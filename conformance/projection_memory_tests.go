package conformance

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/internal/sqlcount"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// In-memory projections (projection.Memory): every process builds the
// read models itself from the event store and writes nothing.

func init() {
	RegisterWorkerAction("projection-memory-node", runMemoryNode)
}

// memNodeArgs are the "projection-memory-node" worker's arguments: the
// fixture decimal's digits of the account projection it declares.
type memNodeArgs struct {
	Precision int `json:"precision"`
	Scale     int `json:"scale"`
}

// memNodeState is what a node reports after a Sync.
type memNodeState struct {
	Position int64                  `json:"position"`
	Models   map[string]projAccount `json:"models"`
}

// runMemoryNode opens the account projection as a Memory and runs it; it
// prints "running", then for each "sync" line on stdin Syncs and prints
// "state <memNodeState>", until "stop".
func runMemoryNode(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, args, err := openJob[memNodeArgs](ctx, db, job)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	m, err := projection.OpenMemory(ctx, e, accountProjectionDigits(args.Precision, args.Scale), projection.WithPollInterval(10*time.Millisecond))
	if err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- m.Run(rctx) }()
	fmt.Println("running")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "sync":
			if err := m.Sync(ctx); err != nil {
				return nil, fmt.Errorf("sync: %w", err)
			}
			all, err := m.All()
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(memNodeState{Position: m.Position(), Models: all})
			if err != nil {
				return nil, err
			}
			fmt.Printf("state %s\n", b)
		case "stop":
			stop()
			if err := <-done; !errors.Is(err, context.Canceled) {
				return nil, fmt.Errorf("run: %w", err)
			}
			return nil, nil
		}
	}
	return nil, errors.New("stdin ended before stop")
}

// memEvent is one appended event of the account projection's, by
// aggregate, in append order: what the expected read models are folded
// from.
type memEvent struct {
	id string
	ev any
}

// memExpected folds the appended events into the read models the account
// projection's listeners make of them, written out independently here.
func memExpected(log []memEvent) map[string]projAccount {
	out := map[string]projAccount{}
	for _, x := range log {
		s, ok := out[x.id]
		if !ok {
			s = projAccount{Balance: "0"}
		}
		switch e := x.ev.(type) {
		case projOpened:
			iban := e.IBAN
			s.IBAN, s.OpenedAt, s.Rank, s.Active = &iban, e.OpenedAt, e.Rank, true
		case projDeposited:
			s.Balance, s.Deposits = addDecimal(s.Balance, e.Amount), s.Deposits+1
		case projClosed:
			delete(out, x.id)
			continue
		}
		out[x.id] = s
	}
	return out
}

// memAppend appends evs to account id (one stream) with an event no
// listener is declared for after them, records them in log, and returns
// the last position.
func memAppend(t T, r *projRig, log *[]memEvent, id string, evs ...any) int64 {
	t.Helper()
	var stored []eventstore.Event
	for _, e := range evs {
		b, err := jsonOf(e)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, eventstore.Event{Type: fmt.Sprintf("%T", e)[len("conformance."):], Payload: b})
		*log = append(*log, memEvent{id: id, ev: e})
	}
	stored = append(stored, ev("t.Unlistened", `{}`))
	res, err := r.s.Append(context.Background(), eventstore.Stream{AggregateType: "bank.Account", AggregateID: id, Events: stored})
	if err != nil {
		t.Fatalf("append to %s: %v", id, err)
	}
	return res.Positions[len(res.Positions)-1]
}

// canonical is a JSON text of read models, for comparing them.
func canonical(t T, models map[string]projAccount) string {
	t.Helper()
	b, err := json.Marshal(models)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// storedModels reads the persistent store's read models of keys, and
// how many it holds in all.
func storedModels(t T, r *projRig, keys []string) (map[string]projAccount, int64) {
	t.Helper()
	ctx := context.Background()
	out := map[string]projAccount{}
	for _, k := range keys {
		v, ok, err := r.st.Get(ctx, k)
		if err != nil {
			t.Fatalf("Get(%s): %v", k, err)
		}
		if ok {
			out[k] = v
		}
	}
	n, err := r.st.Count(ctx)
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	return out, n
}

// testProjectionMemoryEveryNode: two OS processes each build the account
// projection in memory from the same event store (some read models
// deleted by a listener, one opened again after); after a Sync each
// holds exactly the read models folded from the events, equal to the
// persistent store's of the same projection applied by a runner. Events
// appended while both run are applied by both: a Sync later they
// converge again.
func testProjectionMemoryEveryNode(t T, env *Env) {
	r := newProjRig(t, env)
	r.run(t, nil)
	ctx, cancel := testtime.Context(context.Background(), 4*time.Minute)
	defer cancel()
	base := time.Date(2024, 3, 1, 9, 30, 0, 0, time.UTC)
	var log []memEvent
	var last int64
	for i := range 6 {
		evs := []any{projOpened{IBAN: fmt.Sprintf("MEM%02d", i), OpenedAt: base.Add(time.Duration(i) * time.Hour), Rank: int64(i)}}
		for d := range i + 1 {
			evs = append(evs, projDeposited{Amount: fmt.Sprintf("%d.25", d+1)})
		}
		if i == 1 || i == 4 {
			evs = append(evs, projClosed{})
		}
		last = memAppend(t, r, &log, fmt.Sprintf("m-%d", i), evs...)
	}
	dec := env.Features.fixtureQueryTable().Fields[1]
	args, _ := json.Marshal(memNodeArgs{Precision: dec.Precision, Scale: dec.Scale})
	job := WorkerJob{Action: "projection-memory-node", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN,
		Config: defaultConfig(env), Args: args}
	nodes := []*liveWorker{startLive(ctx, t, job), startLive(ctx, t, job)}
	for _, n := range nodes {
		n.expect(ctx, t, "running")
	}
	r.checkNodes(ctx, t, nodes, log, last, "after the first appends")

	// While both run: deposits, a deletion, new accounts, a deleted one
	// opened again (a new read model from init).
	last = memAppend(t, r, &log, "m-0", projDeposited{Amount: "100.00"})
	last = max(last, memAppend(t, r, &log, "m-3", projClosed{}))
	last = max(last, memAppend(t, r, &log, "m-1", projOpened{IBAN: "MEM01", OpenedAt: base, Rank: 11}, projDeposited{Amount: "7.75"}))
	for i := 6; i < 9; i++ {
		last = max(last, memAppend(t, r, &log, fmt.Sprintf("m-%d", i), projOpened{IBAN: fmt.Sprintf("MEM%02d", i), OpenedAt: base, Rank: int64(i)},
			projDeposited{Amount: "0.50"}))
	}
	r.checkNodes(ctx, t, nodes, log, last, "after the appends while both ran")
	for _, n := range nodes {
		n.send(t, "stop")
		if res := n.result(ctx, t); !res.OK {
			t.Errorf("a node stopped with %s: %s", res.ErrorKind, res.Error)
		}
	}
}

// checkNodes waits for the persistent store to hold the read models
// folded from log, then has every node Sync and compares its read models
// with them; each node's position must have reached last.
func (r *projRig) checkNodes(ctx context.Context, t T, nodes []*liveWorker, log []memEvent, last int64, when string) {
	t.Helper()
	want := memExpected(log)
	wantText := canonical(t, want)
	keys := make([]string, 0, len(log))
	for _, x := range log {
		keys = append(keys, x.id)
	}
	var stored string
	waitForOr(t, "the persistent store's read models "+when, func() bool {
		got, n := storedModels(t, r, keys)
		stored = canonical(t, got)
		return stored == wantText && n == int64(len(want))
	}, func() string { return fmt.Sprintf("stored %s, want %s", stored, wantText) })
	for _, n := range nodes {
		n.send(t, "sync")
	}
	for i, n := range nodes {
		var st memNodeState
		line := n.expect(ctx, t, "state ")
		if err := json.Unmarshal([]byte(line[len("state "):]), &st); err != nil {
			t.Fatalf("node %d's state: %v", i+1, err)
		}
		t.Logf("node %d %s: synced at position %d with %d read models", i+1, when, st.Position, len(st.Models))
		if got := canonical(t, st.Models); got != wantText {
			t.Errorf("node %d %s: read models %s, want (as stored) %s", i+1, when, got, wantText)
		}
		if st.Position < last {
			t.Errorf("node %d %s: position %d after Sync, want at least %d", i+1, when, st.Position, last)
		}
	}
}

// testProjectionMemoryWritesNothing: opening and running a Memory, its
// Sync and reads, leave no consumer, checkpoint, query-table, read-model
// topic or read-model epoch row behind.
func testProjectionMemoryWritesNothing(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	adv := hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	qt, err := e.QueryTable("account-summary")
	if err != nil {
		t.Fatal(err)
	}
	counts := func() map[string]int {
		out := map[string]int{}
		for _, ph := range []string{"consumers_table", "consumer_checkpoints_table", "read_model_capture_records_table", "read_model_epochs_table"} {
			out[ph] = rowCount(t, e, ph)
		}
		var n int
		if err := e.DB.QueryRow(`SELECT COUNT(*) FROM ` + qt.Table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[qt.Table] = n
		return out
	}
	before := counts()
	s := eventstore.New(e, adv)
	for i := range 4 {
		b, _ := jsonOf(projDeposited{Amount: "1.00"})
		if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: fmt.Sprintf("w-%d", i),
			Events: []eventstore.Event{{Type: "projDeposited", Payload: b}}}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := projection.OpenMemory(ctx, e, accountProjection(env), projection.WithWaker(adv))
	if err != nil {
		t.Fatalf("OpenMemory: %v", err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(rctx) }()
	if err := m.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if v, ok, err := m.Get("w-2"); err != nil || !ok || v.Deposits != 1 || m.Len() != 4 {
		t.Errorf("Get(w-2) = %+v, %v, %v; Len %d: want 1 deposit, 4 read models", v, ok, err, m.Len())
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run after stop: %v", err)
	}
	after := counts()
	for what, n := range before {
		if after[what] != n {
			t.Errorf("%s: %d rows after the in-memory projection ran, %d before", what, after[what], n)
		}
	}
}

// testProjectionMemoryRefusesChained: a projection chained on another's
// read models is refused with a *DeclarationError before any SQL (the
// driver counts none), and a sound one opens without any SQL either.
func testProjectionMemoryRefusesChained(t T, env *Env) {
	counts := &sqlcount.Counts{}
	e := countedEngine(t, env, defaultConfig(env), counts)
	ctx := context.Background()
	p := accountProjection(env)
	projection.OnReadModel(p, "upstream", func(projection.ReadModel[projAccount], *projAccount) error { return nil })
	before := counts.Statements.Load()
	_, err := projection.OpenMemory(ctx, e, p)
	expectErr[*projection.DeclarationError](t, err, "an in-memory projection chained on read models")
	if !errors.Is(err, projection.ErrInvalidDeclaration) {
		t.Errorf("%v: want errors.Is ErrInvalidDeclaration", err)
	}
	if _, err := projection.OpenMemory(ctx, e, projection.New[projAccount]("no-listener", nil)); !errors.Is(err, projection.ErrInvalidDeclaration) {
		t.Errorf("OpenMemory without a listener: %v, want ErrInvalidDeclaration", err)
	}
	if _, err := projection.OpenMemory(ctx, e, accountProjection(env)); err != nil {
		t.Fatalf("OpenMemory of a sound declaration: %v", err)
	}
	if n := counts.Statements.Load() - before; n != 0 {
		t.Errorf("OpenMemory ran %d statements, want none", n)
	}
}
