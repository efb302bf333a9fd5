package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// Retry is how transient database errors (sqlerr.IsTransient: deadlock,
// serialization or Galera certification failure, lock timeout, connection
// lost) are retried: up to Attempts tries in all, none started after
// Budget, sleeping a random time in
// [0, min(Max, Initial·2^n)] before try n+1 ("full jitter": competing
// writers that failed together do not retry together).
type Retry struct {
	// Attempts is the number of tries, the first included; 1 turns retries
	// off. Default 100: the tries are not independent, so the budget is
	// sized in time (see Budget), and Attempts is only its backstop. On a
	// 3-node Galera cluster written through every node (8 writers, load
	// 8-10 on 2 cores) the node whose commits certify first wins again
	// and again while the others' transactions on the counter row are
	// aborted by its write sets (2/3 brute-force aborts, 1/3 certification
	// failures; waiting for the node to apply them, wsrep_sync_wait=2,
	// changed nothing): with unbounded tries one append took 48 tries and
	// 4.4 s (42 and 3.6 s in a second run), and with the old default of 10
	// tries (~0.3-0.7 s of backoff) 0.9-2.1 % of appends failed. 100 tries
	// with backoff capped at Max (200ms) last about 10 s: twice the
	// longest run measured. A lone server, or Galera written through one
	// node, needs only a few (0 retries measured there), so the bound only
	// costs time when the cluster starves a writer.
	Attempts int
	// Budget bounds the time spent trying: no new try starts once Budget
	// has passed since the first one began. Default 10 s, the same twice
	// the longest Galera starvation measured. It is what keeps a slow
	// transient error cheap where Attempts alone would not: a lock wait
	// timeout (InnoDB waits 50 s) is not tried again at all, instead of up
	// to 100 times, and a server that is down is reported after ~10 s.
	// The caller's ctx deadline bounds it further.
	Budget time.Duration
	// Initial is the first backoff's ceiling; default 2ms (about one
	// append's round trips on a LAN).
	Initial time.Duration
	// Max caps every backoff; default 200ms.
	Max time.Duration
	// OnRetry, when set, is called before each retry with the number of
	// the try that failed (0 for the first) and its error: a place to
	// count the rate of transient errors (it runs on the appending
	// goroutine, so it must be quick).
	OnRetry func(attempt int, err error)
}

// DefaultRetry is the policy Append uses unless WithRetry says otherwise.
var DefaultRetry = Retry{Attempts: 100, Budget: 10 * time.Second, Initial: 2 * time.Millisecond, Max: 200 * time.Millisecond}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = DefaultRetry.Attempts
	}
	if r.Budget <= 0 {
		r.Budget = DefaultRetry.Budget
	}
	if r.Initial <= 0 {
		r.Initial = DefaultRetry.Initial
	}
	if r.Max <= 0 {
		r.Max = DefaultRetry.Max
	}
	return r
}

// again tells whether try attempt+1 (attempt counts from 0) may start,
// the first try having started at first.
func (r Retry) again(attempt int, first time.Time) bool {
	return attempt+1 < r.Attempts && time.Since(first) < r.Budget
}

// backoff sleeps before try attempt+1 (attempt counts from 0), or returns
// ctx's error when ctx ends first.
func (r Retry) backoff(ctx context.Context, attempt int) error {
	ceiling := r.Initial << min(attempt, 20)
	if ceiling > r.Max || ceiling <= 0 {
		ceiling = r.Max
	}
	t := time.NewTimer(rand.N(ceiling) + 1)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Option configures a Store (see New).
type Option func(*Store)

// WithRetry sets how Append retries transient errors (see Retry). A zero
// field takes DefaultRetry's value; Attempts 1 turns retries off.
func WithRetry(r Retry) Option { return func(s *Store) { s.retry = r.withDefaults() } }

// transient classifies err with the dialect's rules and tells whether a
// new try may succeed.
func (s *Store) transient(err error) bool {
	return sqlerr.IsTransient(s.e.Errors.Wrap(err))
}

// withIDs returns streams whose every event has an id, copying only the
// streams that lacked one: the ids are fixed before the first try, so a
// retry writes the same events and can recognise them if the first try
// committed after all.
func withIDs(streams []Stream) ([]Stream, error) {
	var out []Stream
	for i, st := range streams {
		for j, ev := range st.Events {
			if ev.ID != "" {
				continue
			}
			if out == nil {
				out = append([]Stream(nil), streams...)
			}
			if &out[i].Events[0] == &streams[i].Events[0] {
				out[i].Events = append([]Event(nil), st.Events...)
			}
			u, err := uuid.NewV7()
			if err != nil {
				return nil, err
			}
			out[i].Events[j].ID = u.String()
		}
	}
	if out == nil {
		return streams, nil
	}
	return out, nil
}

// stored looks, after a try whose outcome was unknown, for the append's own
// events: an append is all or nothing, so when every event of every stream
// is stored under its id in its stream, an earlier try committed and res
// reports where (the positions, in append order, and each stream's new
// version). ok is false when any event is missing.
func (s *Store) stored(ctx context.Context, streams []Stream) (res Appended, ok bool, err error) {
	res = Appended{Versions: map[string]int64{}}
	for _, st := range streams {
		if len(st.Events) == 0 {
			continue
		}
		after := int64(-1)
		if v, exact := st.Expected.Exact(); exact {
			after = v // the try would have stored them right after v
		}
		recs, err := s.Load(ctx, st.AggregateType, st.AggregateID, after)
		if err != nil {
			return Appended{}, false, err
		}
		byID := make(map[string]Recorded, len(recs))
		for _, r := range recs {
			byID[r.ID] = r
		}
		for _, ev := range st.Events {
			id := ev.ID
			if u, err := uuid.Parse(id); err == nil {
				id = u.String()
			}
			r, found := byID[id]
			if !found {
				return Appended{}, false, nil
			}
			res.Positions = append(res.Positions, r.GlobalPosition)
			key := streamKey(st.AggregateType, st.AggregateID)
			res.Versions[key] = max(res.Versions[key], r.SequenceNo)
		}
	}
	return res, true, nil
}

// RetryTx runs fn in a transaction of db and commits it, and runs the whole
// transaction again, after a backoff (DefaultRetry), when fn or the commit
// fails with a transient error. Transient here is what sqlerr.IsTransient
// says (errors the store returns, such as AppendTx's, are classified) or a
// driver error in SQLSTATE class 40, "transaction rollback" (40001
// serialization failure, 40P01 deadlock, MySQL/MariaDB's 1213 and Galera's
// certification failures): an unclassified error of the caller's own
// statements is retried only then. Use Store.RetryTx for the dialect's own
// rules and the store's policy.
//
// fn may run several times: it must not keep effects outside the
// transaction. Give events ids (Event.ID) so that a retry after a commit
// whose outcome was unknown (a connection lost during COMMIT) cannot store
// them twice: it fails with ErrDuplicateEvent instead, which RetryTx returns.
func RetryTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	begin := func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, nil) }
	return retryTx(ctx, DefaultRetry, begin, class40, fn)
}

// RetryTx is the package's RetryTx on the store's engine: the transaction
// has the isolation level of an append, errors are classified by the
// dialect's rules, and the store's Retry policy applies.
func (s *Store) RetryTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	begin := func(ctx context.Context) (*sql.Tx, error) { return s.e.BeginTx(ctx, engine.OpAppend) }
	return retryTx(ctx, s.retry, begin, func(err error) bool { return s.transient(err) || class40(err) }, fn)
}

// class40 is the classification of RetryTx without a dialect.
func class40(err error) bool {
	if sqlerr.IsTransient(err) {
		return true
	}
	st := sqlerr.Extract(err).SQLState
	return len(st) == 5 && st[:2] == "40"
}

func retryTx(ctx context.Context, r Retry, begin func(context.Context) (*sql.Tx, error),
	transient func(error) bool, fn func(tx *sql.Tx) error) error {
	r = r.withDefaults()
	first := time.Now()
	for attempt := 0; ; attempt++ {
		err := runTx(ctx, begin, fn)
		if err == nil || !transient(err) || !r.again(attempt, first) || ctx.Err() != nil {
			return err
		}
		if r.OnRetry != nil {
			r.OnRetry(attempt, err)
		}
		if berr := r.backoff(ctx, attempt); berr != nil {
			return errors.Join(err, berr)
		}
	}
}

func runTx(ctx context.Context, begin func(context.Context) (*sql.Tx, error), fn func(tx *sql.Tx) error) error {
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
