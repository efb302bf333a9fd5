package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
)

// This file runs one group commit: the appends of several callers in one
// transaction, each caller all or nothing, each answered on its own.
//
// Versions are read in the batch's transaction and checked in Go, caller
// after caller in queue order, against the version the stream has once
// the earlier callers of the batch have appended: a caller whose expected
// version (or aggregate id) fails is answered with its typed error and
// leaves the batch; the others commit. On counter-row dialects the counter
// is taken first (one increment by the batch's events, the unused part
// given back by a second one when callers were refused), so every read is
// made under the lock every writer of the database takes: the versions
// cannot move before the commit. Where the insert draws positions
// (PostgreSQL's sequence) there is no such lock: a stream another process
// moves between the read and the insert makes the insert fail, and then
// every caller runs alone, with Append's own checks and errors. A batch of
// exact versions only is first tried without the read (group_checked.go).

// batchRow is a row of a batch and the caller it belongs to.
type batchRow struct {
	row
	caller int
}

// appendBatch commits the appends of batch in one transaction, retrying
// the whole batch on a transient error, and sets each caller's outcome.
func (s *Store) appendBatch(ctx context.Context, batch []*pending) {
	afterTransient, first := false, time.Now()
	for transients := 0; ; transients++ {
		err := s.batchOnce(ctx, batch)
		switch {
		case err == nil:
			s.settle(ctx, batch, afterTransient)
			return
		case s.transient(err) && s.retry.Again(transients, first):
			if s.retry.OnRetry != nil {
				s.retry.OnRetry(transients, err)
			}
			_ = s.retry.Backoff(ctx, transients) // ctx is never cancelled
			afterTransient = true
			continue
		case s.transient(err):
			for _, p := range batch {
				p.res, p.err = Appended{}, s.dbErr(err)
			}
			return
		}
		// A constraint the batch's checks could not see (a duplicate event
		// id, a stream moved by another process): every caller runs alone,
		// so each gets the outcome and error it would have had alone.
		for _, p := range batch {
			p.res, p.err = s.appendAloneInBatch(p, afterTransient)
		}
		return
	}
}

// appendAloneInBatch runs p alone for its batch: whatever p's ctx does (the
// batch promised to run); appendInTx rolls it back if it panics.
func (s *Store) appendAloneInBatch(p *pending, afterTransient bool) (Appended, error) {
	return s.appendAlone(context.WithoutCancel(p.ctx), p.streams, afterTransient)
}

// settle finishes a committed batch: after a transient error a caller
// refused for a moved stream or a taken id looks for its own events, which
// an earlier try may have committed; then the advancer is nudged once, with
// the committed end of the batch's positions where the strategy lets an
// append report one (as a lone append does).
func (s *Store) settle(ctx context.Context, batch []*pending, afterTransient bool) {
	var committed Appended
	ok := false
	for _, p := range batch {
		if afterTransient && (errors.Is(p.err, ErrConcurrency) || errors.Is(p.err, ErrAggregateIDTaken)) {
			if res, found, ferr := s.stored(ctx, p.streams); ferr == nil && found {
				p.res, p.err = res, nil
			}
		}
		if p.err == nil {
			committed.Positions = append(committed.Positions, p.res.Positions...)
			ok = true
		}
	}
	if ok {
		s.nudgeCommitted(committed)
	}
}

// batchOnce is one try of a batch. A caller's own refusal is set in its
// p.err; the error returned is the batch's (nothing of it committed).
func (s *Store) batchOnce(ctx context.Context, batch []*pending) (err error) {
	if s.e.Cat.Locks.SerializesWriters {
		s.writeMu.Lock() // see appendOnce
		defer s.writeMu.Unlock()
	}
	if !s.e.Cat.Locks.SerializesWriters {
		// Queued with this process's lone appends (appendInTx) where the
		// strategy's positions hold appends back until they commit.
		locked := false
		s.positions.Hold(func() { s.counterMu.Lock(); locked = true })
		defer func() {
			if locked {
				s.counterMu.Unlock()
			}
		}()
	}
	total := 0
	for _, p := range batch {
		p.res, p.err = Appended{}, nil
		total += p.events
	}
	if done, err := s.tryCheckedBatch(ctx, batch, total); done {
		return err
	}
	computed := s.computedStreams(batch)
	if s.oneStatementBatch(batch, computed, total) {
		// Nothing to read and one statement: atomic by itself, no BEGIN
		// or COMMIT round trips (what a lone append does on this dialect).
		return s.batchInsert(ctx, s.e.DB, batch, computed, position.Reservation{})
	}
	tx, err := s.e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	// Positions first: the reads below are made under the counter's lock.
	reserved, err := s.positions.Reserve(ctx, tx, total, position.Reservation{}, nil)
	if err != nil {
		return err
	}
	committed = true // batchInsert commits or rolls back
	return s.batchInsert(ctx, tx, batch, computed, reserved)
}

// batchInsert checks and inserts the batch on q, a transaction (committed
// or rolled back here) unless the batch is one statement. reserved holds
// the positions of every event of the batch unless the insert draws them.
func (s *Store) batchInsert(ctx context.Context, q queryer, batch []*pending, computed map[key]bool, reserved position.Reservation) (err error) {
	tx, inTx := q.(interface {
		Commit() error
		Rollback() error
	})
	done := false
	defer func() {
		if inTx && !done {
			_ = tx.Rollback()
		}
	}()
	rows, err := s.batchRows(ctx, q, batch, computed)
	if err != nil {
		return err
	}
	// Refused callers give their positions back: no gap.
	if reserved, err = s.positions.Resize(ctx, q, reserved, len(rows)); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil // every caller refused; the rollback restores the counter
	}
	all := Appended{Positions: make([]int64, len(rows)), Versions: map[string]int64{}}
	stamp(reserved, all.Positions, func(i int) *row { return &rows[i].row })
	seqs := make([]int64, len(rows))
	if s.group != nil && s.group.fault != nil {
		s.group.fault()
	}
	if err := s.insertBatch(ctx, q, rows, all, seqs); err != nil {
		return err
	}
	if inTx {
		done = true
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	for i, r := range rows {
		p := batch[r.caller]
		p.res.Positions = append(p.res.Positions, all.Positions[i])
		if r.computed {
			p.res.Versions[r.stream] = max(p.res.Versions[r.stream], seqs[i])
		}
	}
	return nil
}

// computedStreams are the streams (by table and id) whose sequence numbers
// the insert computes (RowInsert.NextSequence), with no read: one event in
// the whole batch, appended with Any, where the insert draws positions.
// A stream with more events is read once instead, as a lone append does: a
// subquery per row costs far more than one version read once a batch holds
// hundreds of rows (figures in docs/performance.md).
func (s *Store) computedStreams(batch []*pending) map[key]bool {
	if !s.plan.computesBatch() {
		return nil
	}
	out, events := map[key]bool{}, map[key]int{}
	for _, p := range batch {
		for _, st := range p.streams {
			if len(st.Events) == 0 {
				continue
			}
			k := s.key(st)
			events[k] += len(st.Events)
			if v, seen := out[k]; !seen || v {
				out[k] = st.Expected == Any
			}
		}
	}
	for k, n := range events {
		if n > 1 {
			out[k] = false
		}
	}
	return out
}

// oneStatementBatch tells whether the batch is one insert: every stream
// computed, one table, one chunk.
func (s *Store) oneStatementBatch(batch []*pending, computed map[key]bool, total int) bool {
	if len(computed) == 0 || total > s.plan.maxRows(row{computed: true}) {
		return false
	}
	table := ""
	for _, p := range batch {
		for _, st := range p.streams {
			if len(st.Events) == 0 {
				continue
			}
			k := s.key(st)
			if !computed[k] || table != "" && k.table != table {
				return false
			}
			table = k.table
		}
	}
	return true
}

// insertBatch inserts rows in queue order (so each caller's positions
// follow its own order).
func (s *Store) insertBatch(ctx context.Context, tx queryer, rows []batchRow, all Appended, seqs []int64) error {
	_, err := s.insertChunks(ctx, tx, plainRows(rows), all, seqs)
	return err
}

// plainRows are the rows of a batch, each indexed by its place in it.
func plainRows(rows []batchRow) []row {
	plain := make([]row, len(rows))
	for i := range rows {
		plain[i] = rows[i].row
		plain[i].index = i
	}
	return plain
}

// streamState is a stream's version and owner as the batch goes.
type streamState struct {
	version int64
	owner   string
}

// batchRows reads the version of every stream of the batch once, checks
// each caller's expectations in queue order and returns the rows of the
// callers that pass. A refused caller's error is set in its p.err.
func (s *Store) batchRows(ctx context.Context, tx queryer, batch []*pending, computed map[key]bool) ([]batchRow, error) {
	states, err := s.readVersions(ctx, tx, batch, computed)
	if err != nil {
		return nil, err
	}
	var rows []batchRow
	now := time.Now().UTC()
	for ci, p := range batch {
		mine := map[key]streamState{} // this caller's changes, kept if it passes
		var own []batchRow
		versions := map[string]int64{}
		for _, st := range p.streams {
			if len(st.Events) == 0 {
				continue
			}
			k := s.key(st)
			table := k.table
			part := PartitionKey(st.AggregateID, s.e.Partitions)
			if computed[k] {
				// Any, and the insert computes the number: no read.
				vk := versionKey(st)
				for _, ev := range st.Events {
					r, err := s.eventRow(table, st, ev, 0, part, now)
					if err != nil {
						return nil, err
					}
					r.computed, r.stream = true, vk
					own = append(own, batchRow{row: r, caller: ci})
				}
				versions[vk] = -1 // set from the insert's result
				continue
			}
			cur, ok := mine[k]
			if !ok {
				if cur, ok = states[k]; !ok {
					v, owner, err := s.streamVersion(ctx, tx, table, st.AggregateID)
					if err != nil {
						return nil, err
					}
					cur = streamState{version: v, owner: owner}
					states[k] = cur
				}
			}
			if cur.owner != "" && cur.owner != st.AggregateType {
				p.err = &AggregateIDTakenError{Table: table, AggregateID: st.AggregateID, AggregateType: st.AggregateType, OwnerType: cur.owner}
				break
			}
			if !versionMatches(st.Expected, cur.version) {
				p.err = &ConcurrencyError{AggregateType: st.AggregateType, AggregateID: st.AggregateID, Expected: st.Expected, Actual: cur.version}
				break
			}
			for _, ev := range st.Events {
				cur.version++
				r, err := s.eventRow(table, st, ev, cur.version, part, now)
				if err != nil {
					return nil, err
				}
				own = append(own, batchRow{row: r, caller: ci})
			}
			cur.owner = st.AggregateType
			mine[k] = cur
			versions[versionKey(st)] = cur.version
		}
		if p.err != nil {
			continue
		}
		for k, st := range mine {
			states[k] = st
		}
		p.res.Versions = versions
		rows = append(rows, own...)
	}
	return rows, nil
}

// readVersions reads the versions of the batch's streams that are not
// computed, StreamVersionsWidth per statement where the dialect has
// StreamVersions (else batchRows reads them one by one), keyed by table
// and id; a stream with no row is at -1.
func (s *Store) readVersions(ctx context.Context, q queryer, batch []*pending, computed map[key]bool) (map[key]streamState, error) {
	states := map[key]streamState{}
	if !s.e.Has(dialect.StreamVersions) {
		return states, nil
	}
	byTable := map[string][]string{}
	var tables []string
	for _, p := range batch {
		for _, st := range p.streams {
			k := s.key(st)
			table := k.table
			if len(st.Events) == 0 || computed[k] {
				continue
			}
			if _, seen := states[k]; seen {
				continue
			}
			states[k] = streamState{version: -1}
			if _, ok := byTable[table]; !ok {
				tables = append(tables, table)
			}
			byTable[table] = append(byTable[table], st.AggregateID)
		}
	}
	for _, table := range tables {
		ids := byTable[table]
		for start := 0; start < len(ids); start += dialect.StreamVersionsWidth {
			part := ids[start:min(len(ids), start+dialect.StreamVersionsWidth)]
			if err := s.readVersionsOnce(ctx, q, table, part, states); err != nil {
				return nil, err
			}
		}
	}
	return states, nil
}

func (s *Store) readVersionsOnce(ctx context.Context, q queryer, table string, ids []string, states map[key]streamState) error {
	args := make(map[string]any, dialect.StreamVersionsWidth)
	for i, b := range dialect.StreamVersionsBinds {
		args[b] = ids[min(i, len(ids)-1)] // a repeated id fills the rest
	}
	rs, err := s.e.Query(ctx, q, dialect.StreamVersions, map[string]string{"event_store_table": table}, args)
	if err != nil {
		return fmt.Errorf("reading stream versions: %w", err)
	}
	defer rs.Close()
	asked := make(map[string]bool, len(ids))
	for _, id := range ids {
		asked[id] = true
	}
	foreign := false
	for rs.Next() {
		var id, owner string
		var v int64
		if err := rs.Scan(&id, &v, &owner); err != nil {
			return fmt.Errorf("reading stream versions: %w", err)
		}
		if !asked[id] {
			foreign = true // the engine matched an id that is not the one asked (collation)
			continue
		}
		delete(asked, id)
		states[key{table, id}] = streamState{version: v, owner: owner}
	}
	if foreign {
		// Which asked id it stands for is the engine's business: the ids
		// without an exact row are read one by one (StreamVersion).
		for id := range asked {
			delete(states, key{table, id})
		}
	}
	return rs.Err()
}
