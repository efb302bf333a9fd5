package eventstore

import (
	"context"
	"database/sql"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

// Retry is how Append, AppendTx's RetryTx and group commit retry transient
// database errors: the core's one policy (engine.TransientRetry; see it for
// the fields). On a 3-node Galera cluster written through every node the
// default outlasts twice the longest starvation measured
// (docs/deployments.md).
type Retry = engine.TransientRetry

// DefaultRetry is the policy Append uses unless WithRetry says otherwise
// (engine.DefaultTransientRetry).
var DefaultRetry = engine.DefaultTransientRetry

// Option configures a Store (see New).
type Option func(*Store)

// WithRetry sets how Append retries transient errors (see Retry). A zero
// field takes DefaultRetry's value; Attempts 1 turns retries off.
func WithRetry(r Retry) Option { return func(s *Store) { s.retry = r.WithDefaults() } }

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
			key := versionKey(st)
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
	return r.Do(ctx, transient, func() error { return runTx(ctx, begin, fn) })
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
