package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemarkdb/tidemark/core/lease"
)

// Options configure a Runner.
type Options struct {
	Type, Name string
	// Routes are the sources the runner reads, each with the handler of
	// its messages (On).
	Routes []Route
	// Transactional: the handler writes to the engine's database in tx and
	// the checkpoint is written in that transaction; otherwise it is
	// written after the apply.
	Transactional bool
	// Workers bounds the applies running at once within a poll (default 4);
	// messages of one key always go to the same worker, in order.
	Workers int
	// TxBatch, with Transactional, applies up to this many consecutive
	// messages of a partition in one transaction with one checkpoint write
	// (each partition then goes to one worker, in order). A chunk whose
	// handler fails rolls back whole, and its messages are applied one by
	// one: the handler runs again for those before the failing one (their
	// writes were rolled back). 0 or 1: one message per transaction.
	TxBatch int
	// PollInterval is the fallback when no wake-up comes (default 100ms).
	PollInterval time.Duration
	// PageSize is the most messages read per partition per poll (default
	// 500); a range read of every partition at once (RangeReader) reads
	// at most PageSize × partitions in all, however they fall (per
	// partition all the same when Transactional).
	PageSize int
	// ReadAhead is how many range reads a poll that read a full page keeps
	// in flight while it applies, each a page further (default 2; -1: none,
	// a poll reads when it starts). Each holds a connection and a page.
	ReadAhead int
	// EmptySaveInterval: over positions that hold nothing to apply, a
	// checkpoint is saved at most this often (default one minute, the
	// spec's).
	EmptySaveInterval time.Duration
	// Now is the application clock (time.Now when nil): state_since, the
	// empty-stretch saves, recorded_at and next_retry_at (in UTC) read it.
	Now func() time.Time
	// Retry is a failing message's budget and backoff (zero fields: the
	// RetryPolicy defaults, 5 attempts, 1 s … 5 min, ×2, ±20 %).
	Retry RetryPolicy
	// OnError decides what a message whose budget is spent becomes
	// (default PolicyHalt: nothing is lost or passed over unseen).
	OnError ErrorPolicy
	// Metrics receives lag, applies, retries, dead letters and halts (nil:
	// NopMetrics).
	Metrics Metrics
	Logger  *slog.Logger
	// Leases, when set, is the process's partition lease coordinator (one
	// per process; the application runs its Run): the runner joins it and
	// reads, applies and saves only the partitions this instance holds,
	// fencing each write under the lease's generation (docs/leases.md).
	// nil: the runner reads every partition.
	Leases *lease.Coordinator
	// Distribution spreads the partitions over the instances (lease.Spread,
	// the default) or holds them all on one (lease.SingleOwner); only with
	// Leases.
	Distribution lease.Distribution
	// AfterPoll, when set, runs after every poll of a running consumer with
	// the epoch the poll ran under (a projection completes a rebuild from
	// it once the replay caught up); its error ends the poll as a database
	// error would. nil for plain consumers: nothing runs.
	AfterPoll func(ctx context.Context, epoch int64) error
	// Companions are tasks that live as long as Run: started with it, their
	// ctx ended when it returns, and waited for (a projection compacts its
	// read-model topic in one). A companion's error is logged; it does not
	// stop Run. Poll runs none.
	Companions []func(ctx context.Context) error
}

// Runner runs one consumer in this process.
type Runner struct {
	reg  *Registry
	opts Options
	c    Consumer

	mu     sync.Mutex
	parts  map[partKey]*partState
	epoch  int64
	loaded bool
	stale  atomic.Bool // a checkpoint write was fenced off: reload next poll (written under mu)
	// epochSent is when the last read that found the consumer running
	// under epochEpoch was sent (checkEpoch trusts it for EpochWindow).
	epochSent  time.Time
	epochEpoch int64

	sources  []Source          // the routes' sources, in order
	bySource map[string]Source // the same by name
	handlers map[string]func(context.Context, *sql.Tx, Message) error
	chunks   map[string]func(context.Context, *sql.Tx, []Message) error // OnChunk routes
	dmu      sync.Mutex                                                 // guards rows and skips
	rows     map[keyRef][]*UndeliveredRow
	skips    map[string][]Skip

	member *lease.Member // nil without Options.Leases
	// pollMu is held by a poll from its lease snapshot to its save: a
	// cooperative handover waits on it for the applies in flight.
	pollMu sync.Mutex
	// last is the latest poll's state (guarded by pollMu): the next poll
	// compares its leases with it, a stop's flush saves under them.
	last *pollState
	// ahead is each source's next page being read while a poll applies
	// (guarded by pollMu).
	ahead map[string][]*readAhead
}

type partKey struct {
	source    string
	partition int
}

// partState is what the runner knows of one partition.
type partState struct {
	saved   int64 // the checkpoint as last read or written
	read    int64 // every position up to here has been read
	pending map[int64]bool
	// aborted are pending positions of this poll that will not complete
	// (failed, skipped behind a failed key, rolled back): what follows
	// them in a Transactional poll rolls back too.
	aborted  map[int64]bool
	changed  chan struct{} // made when an apply waits; closed at the next completion or abort
	dirty    bool          // applied since the last save (written at once)
	started  int64         // the highest position whose apply began
	lastSave time.Time
	// through is the source's replay_through while a rebuild replays (0
	// otherwise): below it, empty stretches are saved at once, so the
	// replay's catch-up (and its switch) does not wait for
	// EmptySaveInterval on partitions with nothing to apply.
	through int64
}

// contiguous is the highest position every apply up to which completed.
func (p *partState) contiguous() int64 {
	c := p.read
	for pos := range p.pending {
		c = min(c, pos-1)
	}
	return c
}

// NewRunner subscribes the consumer to its sources (creating its row and
// checkpoints as needed) and returns its runner.
func NewRunner(ctx context.Context, reg *Registry, opts Options) (*Runner, error) {
	if len(opts.Routes) == 0 {
		return nil, &InvalidOptionsError{"Routes", "a runner needs at least one source with its handler"}
	}
	for _, rt := range opts.Routes {
		if rt.source == nil || rt.apply == nil {
			return nil, &InvalidOptionsError{"Routes", "a route needs a source and a handler (consumer.On)"}
		}
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 500
	}
	switch {
	case opts.ReadAhead == 0:
		opts.ReadAhead = 2
	case opts.ReadAhead < 0:
		opts.ReadAhead = 0
	}
	if opts.EmptySaveInterval <= 0 {
		opts.EmptySaveInterval = time.Minute
	}
	if opts.Now == nil {
		opts.Now = reg.now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = NopMetrics{}
	}
	var err error
	if opts.Retry, err = opts.Retry.withDefaults(); err != nil {
		return nil, err
	}
	if opts.OnError, err = checkPolicy(opts.OnError); err != nil {
		return nil, err
	}
	if err := checkLeaseOptions(opts); err != nil {
		return nil, err
	}
	r := &Runner{reg: reg, bySource: map[string]Source{}, handlers: map[string]func(context.Context, *sql.Tx, Message) error{},
		chunks: map[string]func(context.Context, *sql.Tx, []Message) error{}}
	refs := make([]SourceRef, len(opts.Routes))
	for i, rt := range opts.Routes {
		s := rt.source
		r.sources = append(r.sources, s)
		r.bySource[s.Name()], r.handlers[s.Name()] = s, rt.apply
		if rt.chunk != nil {
			r.chunks[s.Name()] = rt.chunk
		}
		refs[i] = SourceRef{Name: s.Name(), Partitions: s.Partitions()}
	}
	c, err := reg.Subscribe(ctx, opts.Type, opts.Name, refs...)
	if err != nil {
		return nil, err
	}
	r.opts, r.c = opts, c
	if err := r.joinLeases(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Consumer returns the consumer's row as the runner last read it.
func (r *Runner) Consumer() Consumer { return r.c }

// Run polls until ctx ends, woken by the sources' marks with polling as the
// fallback, and by a change of the leases it holds. On ctx's end it lets
// the applies in flight finish, saves the checkpoints, releases its leases
// (Options.Leases: the runner cannot run again) and returns ctx.Err(). A
// database error other than a transient one ends it.
func (r *Runner) Run(ctx context.Context) error {
	defer r.leave(ctx)
	defer r.startCompanions(ctx)()
	timer := time.NewTimer(r.opts.PollInterval)
	defer timer.Stop()
	failures := 0
	for {
		wake := r.wakeups()
		n, more, err := r.poll(ctx)
		if err != nil && !isTransientOrCanceled(ctx, err) {
			return err
		}
		if err == nil {
			failures = 0
		} else if ctx.Err() == nil {
			r.opts.Logger.Warn("consumer poll failed; retrying", "consumer", r.c.Name, "err", err)
			failures++
		}
		if ctx.Err() != nil {
			r.flush(ctx)
			return ctx.Err()
		}
		if n > 0 || more {
			continue
		}
		// A failed poll is retried after a backoff, not at the next
		// wake-up: the mark may already have made its last move (what the
		// failed poll was to read), and PollInterval may be long.
		timer.Reset(r.retryWait(failures))
		select {
		case <-ctx.Done():
			r.flush(ctx)
			return ctx.Err()
		case <-wake:
		case <-r.leaseChanged():
		case <-timer.C:
		}
	}
}

// startCompanions starts Options.Companions and returns what stops them
// and waits for them.
func (r *Runner) startCompanions(ctx context.Context) (stop func()) {
	if len(r.opts.Companions) == 0 {
		return func() {}
	}
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, run := range r.opts.Companions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(cctx); err != nil && cctx.Err() == nil {
				r.opts.Logger.Warn("consumer companion task stopped", "consumer_type", r.opts.Type, "consumer", r.opts.Name, "err", err)
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// retryWait is how long Run waits for a wake-up before polling again
// after failures polls failed in a row: PollInterval, or after a failure
// 10 ms doubling per failure up to a second, whichever is shorter.
func (r *Runner) retryWait(failures int) time.Duration {
	if failures == 0 {
		return r.opts.PollInterval
	}
	return min(r.opts.PollInterval, time.Second, 10*time.Millisecond<<min(failures-1, 7))
}

// wakeups merges the sources' wake-up channels (taken before the poll, so
// no move of a mark is missed).
func (r *Runner) wakeups() <-chan struct{} {
	var chans []<-chan struct{}
	for _, s := range r.sources {
		if c := s.Changed(); c != nil {
			chans = append(chans, c)
		}
	}
	switch len(chans) {
	case 0:
		return nil
	case 1:
		return chans[0]
	}
	out := make(chan struct{})
	var once sync.Once
	for _, c := range chans {
		go func() {
			<-c
			once.Do(func() { close(out) })
		}()
	}
	return out
}

// Poll runs one poll: it reads at most a page of every partition up to its
// source's mark, applies what it read and saves the checkpoints. It
// returns how many messages were applied and whether a partition has more
// to read. A consumer that is not running applies nothing.
func (r *Runner) Poll(ctx context.Context) (int, error) {
	n, _, err := r.poll(ctx)
	return n, err
}

// WorkerOf is the worker (0..workers-1) that applies key's messages. It
// takes the high half of the key's FNV-1a hash: the partition of an event
// is FNV-1a of its aggregate id modulo the partition count, which fixes the
// hash's low bits, so low bits would send every key of a partition to one
// worker whenever the worker and partition counts share a factor of two.
func WorkerOf(key string, workers int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int((h.Sum32() >> 16) % uint32(workers))
}

func isTransientOrCanceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, ErrStale) || transient(err)
}

func (r *Runner) logState(msg string, args ...any) {
	r.opts.Logger.Info(msg, append([]any{"consumer_type", r.c.Type, "consumer", r.c.Name}, args...)...)
}

var (
	errDuplicate = errors.New("already applied with its checkpoint")
	// errAborted: an earlier position of the partition did not complete,
	// so this apply rolled back (it is applied again after the failure).
	errAborted = errors.New("an earlier position of the partition did not complete")
	// errRevoking: the partition is being handed over to another instance
	// (cooperative rebalance): no new message of it is applied; what was
	// applied is saved before the lease is released.
	errRevoking = fmt.Errorf("partition being handed over: %w", errAborted)
)
