package eventstore

import (
	"context"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
)

// This file is the one append pipeline. A lone append is a batch of one
// caller: each try plans the batch (one autocommit statement, or a
// transaction of its own), reserves the positions, builds and checks the
// rows, inserts them and commits; run retries the tries and settles the
// outcome. What a batch of one does differently (reserve after its reads,
// skip the reads the insert can check, turn a refused insert into the
// caller's typed error) the plan and fill decide by the batch's size.

// newPending is one Append as a caller of a batch (group commit adds its
// queue's channels).
func newPending(ctx context.Context, streams []Stream) *pending {
	p := &pending{ctx: ctx, streams: streams}
	for _, st := range streams {
		p.events += len(st.Events)
	}
	return p
}

// refusal tells whether err refuses one caller for its own streams, not
// the batch.
func refusal(err error) bool {
	return errors.Is(err, ErrConcurrency) || errors.Is(err, ErrAggregateIDTaken) || errors.Is(err, ErrDuplicateEvent)
}

// run appends batch, each caller all or nothing, retrying the whole batch
// on a transient error with the store's policy, and sets each caller's
// outcome. afterTransient tells that an earlier try (a batch's) may have
// committed the callers' events.
func (s *Store) run(ctx context.Context, batch []*pending, afterTransient bool) {
	anyLost, transients, first := 0, 0, time.Now()
	for {
		err := s.try(ctx, batch)
		if err != nil && len(batch) == 1 && refusal(err) {
			batch[0].res, batch[0].err, err = Appended{}, err, nil
		}
		if err == nil {
			s.findStored(ctx, batch, afterTransient)
			if s.lostAnyRace(batch) && anyLost < anyRetries {
				anyLost++ // an Any append only lost the race for the next sequence number
				continue
			}
			s.nudgeBatch(batch)
			s.rememberBatch(batch)
			return
		}
		transient := s.transient(err)
		switch {
		case transient && s.retry.Again(transients, first) && ctx.Err() == nil:
			if s.retry.OnRetry != nil {
				s.retry.OnRetry(transients, err)
			}
			if s.retry.Backoff(ctx, transients) == nil {
				transients++
				afterTransient = true
				continue
			}
		case !transient && len(batch) > 1:
			// A constraint the batch's checks could not see (a duplicate
			// event id, a stream moved by another process): every caller
			// runs alone, so each gets the outcome and error it would have
			// had alone, whatever its ctx does (the batch promised to run).
			for _, p := range batch {
				s.run(context.WithoutCancel(p.ctx), []*pending{p}, afterTransient)
			}
			return
		}
		for _, p := range batch {
			p.res, p.err = Appended{}, s.dbErr(err)
		}
		return
	}
}

// findStored: after a transient error a caller refused for a moved stream,
// a taken id or a duplicate event looks for its own events, which an
// earlier try may have committed (a connection lost during COMMIT).
func (s *Store) findStored(ctx context.Context, batch []*pending, afterTransient bool) {
	if !afterTransient {
		return
	}
	for _, p := range batch {
		if refusal(p.err) {
			if res, ok, err := s.stored(ctx, p.streams); err == nil && ok {
				p.res, p.err = res, nil
			}
		}
	}
}

// lostAnyRace tells whether a lone append with Any was refused: it only
// lost the race for the next sequence number, and a new try can succeed.
func (s *Store) lostAnyRace(batch []*pending) bool {
	var ce *ConcurrencyError
	return len(batch) == 1 && errors.As(batch[0].err, &ce) && ce.Expected == Any
}

// rememberBatch remembers the versions of the batch's callers that
// committed (knownVersions).
func (s *Store) rememberBatch(batch []*pending) {
	vs := map[knownKey]int64{}
	for _, p := range batch {
		if p.err != nil {
			continue
		}
		for _, st := range p.streams {
			if v, ok := p.res.Versions[versionKey(st)]; ok && len(st.Events) > 0 {
				vs[knownKey{s.key(st), st.AggregateType}] = v
			}
		}
	}
	s.known.set(vs)
}

// nudgeBatch nudges the advancer once after a batch in which some caller
// committed, with the committed end of their positions where the strategy
// lets an append report one.
func (s *Store) nudgeBatch(batch []*pending) {
	var committed Appended
	ok := false
	for _, p := range batch {
		if p.err == nil {
			committed.Positions = append(committed.Positions, p.res.Positions...)
			ok = true
		}
	}
	if ok {
		s.nudgeCommitted(committed)
	}
}

// try is one try of batch. A caller's own refusal is set in its p.err; the
// error returned is the batch's (nothing of it committed).
//
// On a counter row, the appends of this process queue on a mutex from just
// before the counter is taken until the commit: the database lock is then
// never contended within the process, and a waiting append costs a mutex
// handoff instead of a database lock wait. Everything before (begin, a lone
// append's version reads) overlaps.
func (s *Store) try(ctx context.Context, batch []*pending) error {
	// The engine runs one writing transaction at a time (SQLite): queue
	// this process's appends, and the advancer's writes, on the engine
	// instead of in the busy handler, which sleeps and retries. (The lock at
	// BEGIN, against other processes, is the driver's: see
	// LockForms.SerializesWriters.) It is held for one try: a retry's
	// backoff does not block others.
	defer s.e.LockWriter()()
	total := 0
	for _, p := range batch {
		p.res, p.err = Appended{}, nil
		total += p.events
	}
	if done, err := s.tryCheckedBatch(ctx, batch, total); done {
		return err
	}
	computed := s.computedStreams(batch)
	if s.oneStatement(batch, computed, total) {
		// Atomic by itself: no BEGIN or COMMIT round trips.
		_, err := s.fill(ctx, s.e.DB, batch, computed, nil, false)
		return err
	}
	tx, err := s.e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return err
	}
	locked := false
	defer func() {
		if locked {
			s.counterMu.Unlock()
		}
	}()
	// Registered after the unlock, so it runs first: on an error or a
	// panic the counter row's lock is released before the next append of
	// this process takes the mutex. After a commit it is a no-op.
	defer func() { _ = tx.Rollback() }()
	var lock func()
	if !s.e.Cat.Locks.SerializesWriters {
		lock = func() { s.counterMu.Lock(); locked = true }
	}
	n, err := s.fill(ctx, tx, batch, computed, lock, false)
	if err != nil || n == 0 {
		return err // every caller refused: the rollback restores the counter
	}
	if s.txFault != nil && len(batch) == 1 {
		s.txFault()
	}
	if err := tx.Commit(); err != nil {
		for _, p := range batch {
			p.res = Appended{}
		}
		if len(batch) == 1 {
			return s.translate(ctx, err, batch[0].streams, "", nil)
		}
		return err
	}
	return nil
}

// oneStatement tells whether the batch is one autocommit insert (see
// plan.oneStatement for a lone append, oneStatementBatch for several).
func (s *Store) oneStatement(batch []*pending, computed map[key]bool, total int) bool {
	if len(batch) == 1 {
		return s.plan.oneStatement(batch[0].streams)
	}
	return s.oneStatementBatch(batch, computed, total)
}

// fill reserves the batch's positions, builds and checks its rows, and
// inserts them on q, giving each caller that passes its positions and
// versions; it returns the number of rows inserted. lock, when set, runs
// right before positions that hold other appends back are taken. precheck
// (AppendTx) reads every stream's version before any insert.
//
// A batch takes its positions before its reads, so they are made under the
// counter's lock and checked against each other in Go; a batch of one takes
// them as late as possible, after its reads, unless the dialect asks for
// them first (position.Writer.ReserveFirst).
func (s *Store) fill(ctx context.Context, q queryer, batch []*pending, computed map[key]bool, lock func(), precheck bool) (int, error) {
	total := 0
	for _, p := range batch {
		total += p.events
	}
	var reserved position.Reservation
	var err error
	if len(batch) == 1 {
		reserved, err = s.positions.ReserveFirst(ctx, q, total, lock)
	} else {
		reserved, err = s.positions.Reserve(ctx, q, total, reserved, lock)
	}
	if err != nil {
		return 0, err
	}
	rows, err := s.batchRows(ctx, q, batch, computed, precheck)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	if reserved, err = s.positions.Reserve(ctx, q, len(rows), reserved, lock); err != nil {
		return 0, err
	}
	// Refused callers give their positions back: no gap.
	if reserved, err = s.positions.Resize(ctx, q, reserved, len(rows)); err != nil {
		return 0, err
	}
	all := Appended{Positions: make([]int64, len(rows)), Versions: map[string]int64{}}
	stamp(reserved, all.Positions, func(i int) *row { return &rows[i] })
	seqs := make([]int64, len(rows))
	if len(batch) > 1 && s.group != nil && s.group.fault != nil {
		s.group.fault()
	}
	if table, err := s.insertChunks(ctx, q, rows, all, seqs); err != nil {
		if len(batch) == 1 {
			return 0, s.translate(ctx, err, batch[0].streams, table, txOf(q, s.e.DB))
		}
		return 0, err
	}
	distribute(batch, rows, all, seqs)
	return len(rows), nil
}

// distribute gives each caller the positions of its rows, in order, and
// the versions the insert computed.
func distribute(batch []*pending, rows []row, all Appended, seqs []int64) {
	for i, r := range rows {
		p := batch[r.caller]
		p.res.Positions = append(p.res.Positions, all.Positions[i])
		if r.computed {
			p.res.Versions[r.stream] = max(p.res.Versions[r.stream], seqs[i])
		}
	}
}

// txOf is q when it is a transaction, nil when it is the pool (an
// autocommit statement).
func txOf(q queryer, db queryer) queryer {
	if q == db {
		return nil
	}
	return q
}
