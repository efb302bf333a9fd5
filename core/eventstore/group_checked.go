package eventstore

import (
	"context"
	"time"
)

// This file runs a group commit whose exact expected versions the insert
// itself checks: one autocommit statement, no BEGIN, no version read, no
// COMMIT. Each row's sequence number is RowInsert.CheckedSequence: NULL
// (refused by NOT NULL) unless the stream's version, as the statement
// sees it, is the one the batch expects. A stream that is already further
// collides on UNIQUE (aggregate_id, sequence_no). Either refusal fails the
// whole statement and nothing is stored; the batch then runs the read path
// (batchRows), which reads the actual versions, refuses the callers whose
// expectation fails with the version it read, and commits the others.

// tryCheckedBatch runs batch as one checked insert where it can. done is
// false when the batch must take the read path: it cannot be checked, or
// the insert refused it for a reason that is not transient (a version, a
// taken aggregate id, a duplicate event id: the read path tells which
// caller, with the version it reads). A transient error is the batch's.
func (s *Store) tryCheckedBatch(ctx context.Context, batch []*pending, total int) (done bool, err error) {
	rows, after, ok, err := s.checkedBatchRows(batch, total)
	if err != nil {
		return true, err
	}
	if ok {
		err = s.checkedBatch(ctx, batch, rows)
		if err == nil || s.transient(err) {
			return true, err
		}
		s.known.forget(after)
	}
	for _, p := range batch {
		p.res, p.err = Appended{}, nil
	}
	return false, nil
}

// checkedBatchRows returns the rows of batch for one checked insert, the
// versions its streams have once it commits, and false when the batch
// cannot take that path: a stream appended with Any or StreamExists (those
// need a read, or a computed number), more rows than one statement
// carries, or a caller whose expectation cannot hold after the earlier
// callers of the batch (the read path refuses it). A lone caller takes it
// only when no row needs a check.
//
// When every stream is expected empty (NoStream: its row 0 collides with
// any event already there) or at the version this store's last append to
// it committed (knownVersions), the rows bind their sequence numbers and
// the insert reads no stream: the unique key is the whole check.
func (s *Store) checkedBatchRows(batch []*pending, total int) ([]row, map[knownKey]int64, bool, error) {
	if !s.plan.checksBatch() || total > s.plan.maxRows(row{checkAll: true}) {
		return nil, nil, false, nil
	}
	type state struct {
		before, cur int64 // version before the statement; after the rows so far
		table       string
	}
	states := map[knownKey]*state{}
	trusted := true
	var rows []row
	now := time.Now().UTC()
	for ci, p := range batch {
		versions := map[string]int64{}
		for _, st := range p.streams {
			if len(st.Events) == 0 {
				continue
			}
			want, ok := st.Expected.Exact()
			if st.Expected == NoStream {
				want, ok = -1, true
			}
			if !ok {
				return nil, nil, false, nil
			}
			k := knownKey{s.key(st), st.AggregateType}
			table := k.table
			cur := states[k]
			switch {
			case cur == nil:
				cur = &state{before: want, cur: want, table: table}
				states[k] = cur
				trusted = trusted && (want == -1 || s.known.is(k, want))
			case cur.cur != want:
				return nil, nil, false, nil
			}
			if len(rows) > 0 && rows[0].table != table {
				return nil, nil, false, nil // one statement, one table
			}
			part := PartitionKey(st.AggregateID, s.e.Partitions)
			for _, ev := range st.Events {
				cur.cur++
				r, err := s.eventRow(table, st, ev, cur.cur, part, now)
				if err != nil {
					return nil, nil, false, err
				}
				r.vals[pExpectedVersion], r.checkAll, r.caller, r.index = cur.before, true, ci, len(rows)
				rows = append(rows, r)
			}
			versions[versionKey(st)] = cur.cur
		}
		p.res.Versions = versions
	}
	if len(rows) == 0 || len(batch) == 1 && !trusted {
		return nil, nil, false, nil
	}
	after := make(map[knownKey]int64, len(states))
	for k, st := range states {
		after[k] = st.cur
	}
	if trusted {
		for i := range rows {
			rows[i].checkAll = false // bound sequence numbers: the plain insert
		}
	}
	return rows, after, true, nil
}

// checkedBatch inserts rows, from checkedBatchRows, in one autocommit
// statement and gives each caller its positions. On an error nothing is
// stored and the callers' results are cleared.
func (s *Store) checkedBatch(ctx context.Context, batch []*pending, rows []row) error {
	all := Appended{Positions: make([]int64, len(rows)), Versions: map[string]int64{}}
	if s.group != nil && s.group.fault != nil {
		s.group.fault()
	}
	if _, err := s.insertChunks(ctx, s.e.DB, rows, all, nil); err != nil {
		for _, p := range batch {
			p.res = Appended{}
		}
		return err
	}
	for i, r := range rows {
		p := batch[r.caller]
		p.res.Positions = append(p.res.Positions, all.Positions[i])
	}
	return nil
}
