package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
)

// anyRetries bounds internal retries of an Any append that lost a race.
const anyRetries = 16

type row struct {
	table    string
	vals     [nParams]any
	index    int    // position in the append's event order
	computed bool   // sequence_no computed by the database (NextSequence)
	checked  bool   // sequence_no checked by the database (CheckedSequence)
	checkAll bool   // so is every row's of its statement (a checked batch)
	stream   string // stream key, for computed rows
}

// Append appends streams in one transaction of its own: all or nothing.
//
// Where the dialect allows it (the insert draws positions and returns them),
// a single-stream append is one autocommit statement: atomic by itself, with
// no transaction round trips and, for Exactly and NoStream, no version read:
// the unique constraint on (aggregate_id, sequence_no) is the check.
//
// A transient error (sqlerr.IsTransient: a deadlock, a serialization or
// Galera certification failure, a lock timeout, a connection lost) is
// retried with the store's Retry policy (WithRetry). The retries are safe:
// event ids are fixed before the first try (a UUIDv7 for each event without
// one), so a retry never stores an event twice, and a retry that finds the
// stream moved or an id taken looks for its own events first: if an earlier
// try committed after all (a connection lost during COMMIT), Append reports
// success with their positions. A conflict with a concurrent writer (another
// node of a cluster, say) that surfaces as a transient error ends, after the
// retry reads the stream's new version, as a ConcurrencyError. Once the
// tries are spent the last error is returned, classified
// (errors.Is(err, sqlerr.ErrTransient)).
func (s *Store) Append(ctx context.Context, streams ...Stream) (Appended, error) {
	// Bad input is refused before any SQL (not even a BEGIN): nothing stored.
	if err := s.checkStreams(streams); err != nil {
		return Appended{}, err
	}
	streams, err := withIDs(streams)
	if err != nil {
		return Appended{}, err
	}
	if s.group != nil {
		return s.group.append(ctx, s, streams)
	}
	return s.appendAlone(ctx, streams, false)
}

// appendAlone is an append in a transaction of its own, with its retries.
// afterTransient tells that an earlier try (a group commit's) may have
// committed the append's events.
func (s *Store) appendAlone(ctx context.Context, streams []Stream, afterTransient bool) (Appended, error) {
	anyLost, transients, first := 0, 0, time.Now()
	for {
		res, err := s.appendOnce(ctx, streams)
		if err == nil {
			s.nudgeCommitted(res)
			return res, nil
		}
		var ce *ConcurrencyError
		conflict := errors.As(err, &ce)
		if afterTransient && (conflict || errors.Is(err, ErrDuplicateEvent)) {
			if res, ok, ferr := s.stored(ctx, streams); ferr == nil && ok {
				s.nudge()
				return res, nil
			}
		}
		switch {
		case conflict && ce.Expected == Any && anyLost < anyRetries:
			anyLost++ // an Any append only lost the race for the next sequence number
			continue
		case !conflict && s.transient(err) && s.retry.Again(transients, first) && ctx.Err() == nil:
			if s.retry.OnRetry != nil {
				s.retry.OnRetry(transients, err)
			}
			if berr := s.retry.Backoff(ctx, transients); berr != nil {
				return Appended{}, s.dbErr(err)
			}
			transients++
			afterTransient = true
			continue
		}
		return Appended{}, s.dbErr(err)
	}
}

// appendOnce is one try of Append.
func (s *Store) appendOnce(ctx context.Context, streams []Stream) (Appended, error) {
	if s.e.Cat.Locks.SerializesWriters {
		// The engine runs one writing transaction at a time (SQLite): queue
		// this process's appends here instead of in the engine's busy
		// handler, which sleeps and retries. (The lock at BEGIN, against
		// other processes, is the driver's: see LockForms.SerializesWriters.)
		// It is held for one try: a retry's backoff does not block others.
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	if s.plan.oneStatement(streams) {
		return s.append(ctx, s.e.DB, streams, false, nil)
	}
	return s.appendInTx(ctx, streams)
}

// appendInTx appends in a transaction of its own. On a counter row, the
// appends of this process queue on a mutex from just before the counter is
// taken until the commit: the database lock is then never contended within
// the process, and a waiting append costs a mutex handoff instead of a
// database lock wait. Everything before (begin, version reads) overlaps.
func (s *Store) appendInTx(ctx context.Context, streams []Stream) (Appended, error) {
	tx, err := s.e.BeginTx(ctx, engine.OpAppend)
	if err != nil {
		return Appended{}, err
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
	var beforeLock func()
	if !s.e.Cat.Locks.SerializesWriters {
		// Run by the write side just before it takes positions that hold
		// other appends back until this one commits.
		beforeLock = func() { s.counterMu.Lock(); locked = true }
	}
	res, err := s.append(ctx, tx, streams, false, beforeLock)
	if err != nil {
		return Appended{}, err
	}
	if s.txFault != nil {
		s.txFault()
	}
	if err := tx.Commit(); err != nil {
		return Appended{}, s.translate(ctx, err, streams, "")
	}
	return res, nil
}

// AppendTx appends streams inside the caller's transaction, so the caller's
// own writes commit with the events. tx must come from the engine's *sql.DB
// (the store's prepared statements belong to it). On error the caller must
// roll back (on some engines the transaction is already aborted).
//
// AppendTx does not retry: a transient error (errors.Is(err,
// sqlerr.ErrTransient): deadlock, serialization or certification failure,
// lock timeout, lost connection) has already undone, or will undo, the
// caller's whole transaction, so only the caller can run it again, from its
// BEGIN. Store.RetryTx (or the package's RetryTx) does that. Give the events
// ids so that such a rerun cannot store them twice.
func (s *Store) AppendTx(ctx context.Context, tx *sql.Tx, streams ...Stream) (Appended, error) {
	// The version is read first, so a conflict is reported before any
	// statement fails (which would abort the caller's transaction on some engines).
	// The store cannot see the caller's commit: the advancer's next poll
	// publishes the events (or the caller nudges it after committing).
	if err := s.checkStreams(streams); err != nil {
		return Appended{}, err
	}
	res, err := s.append(ctx, tx, streams, true, nil)
	return res, s.dbErr(err)
}

// append does the work of an append on q. beforeLock, when set, runs right
// before the position counter is taken.
func (s *Store) append(ctx context.Context, q queryer, streams []Stream, precheck bool, beforeLock func()) (Appended, error) {
	res := Appended{Versions: map[string]int64{}}
	// Where the dialect asks for it, positions are taken before any read
	// of the append (see position.Writer.ReserveFirst).
	total := 0
	for _, st := range streams {
		total += len(st.Events)
	}
	reserved, err := s.positions.ReserveFirst(ctx, q, total, beforeLock)
	if err != nil {
		return res, err
	}
	var rows []row
	now := time.Now().UTC()
	for _, st := range streams {
		if len(st.Events) == 0 {
			continue
		}
		if rows, err = s.streamRows(ctx, q, st, precheck, now, rows, res.Versions); err != nil {
			return res, err
		}
	}
	if len(rows) == 0 {
		return res, nil
	}
	res.Positions = make([]int64, len(rows))
	// Positions the insert does not draw are taken as late as possible:
	// after every read of the append.
	if reserved, err = s.positions.Reserve(ctx, q, len(rows), reserved, beforeLock); err != nil {
		return res, err
	}
	stamp(reserved, res.Positions, func(i int) *row { return &rows[i] })
	if table, err := s.insertChunks(ctx, q, rows, res, nil); err != nil {
		return res, s.translate(ctx, err, streams, table)
	}
	return res, nil
}

// stamp sets the reserved positions, in order, in positions and on the
// rows (at(i) is the i-th); with none reserved the insert draws them and
// returns them.
func stamp(r position.Reservation, positions []int64, at func(i int) *row) {
	if !r.Held() {
		return
	}
	for i := range positions {
		positions[i] = r.Position(i)
		at(i).vals[pGlobalPosition] = positions[i]
	}
}

// streamRows appends the rows of one stream's events to rows and records
// the stream's new version in versions (-1 where the insert computes it).
func (s *Store) streamRows(ctx context.Context, q queryer, st Stream, precheck bool, now time.Time, rows []row, versions map[string]int64) ([]row, error) {
	table := s.eventTable(st.AggregateType)
	seq, how, err := s.startSequence(ctx, q, table, st, precheck)
	if err != nil {
		return rows, err
	}
	key := versionKey(st)
	part := PartitionKey(st.AggregateID, s.e.Partitions)
	exact, _ := st.Expected.Exact()
	for i, ev := range st.Events {
		seq++
		r, err := s.eventRow(table, st, ev, seq, part, now)
		if err != nil {
			return rows, err
		}
		r.index = len(rows)
		if how == seqComputed {
			r.computed, r.stream = true, key
		}
		if how == seqChecked && i == 0 {
			r.vals[pExpectedVersion], r.checked = exact, true
		}
		rows = append(rows, r)
	}
	versions[key] = seq
	if how == seqComputed {
		versions[key] = -1 // set from the insert's result
	}
	return rows, nil
}

// How a stream's sequence numbers are known: read (or implied) before the
// insert, computed by the insert, or checked by the insert.
const (
	seqKnown = iota
	seqComputed
	seqChecked
)

// startSequence tells the sequence number before st's first event, and how
// it is known: read it; or, for NoStream, let the unique constraint on
// sequence 0 check it (-1); or let the insert check an exact version
// (CheckedSequence) or compute the next sequence number (NextSequence)
// itself. Without CheckedSequence an exact version is read: the unique
// constraint alone cannot tell that version v exists.
func (s *Store) startSequence(ctx context.Context, q queryer, table string, st Stream, precheck bool) (int64, int, error) {
	exact, isExact := st.Expected.Exact()
	switch {
	case !precheck && st.Expected == NoStream:
		return -1, seqKnown, nil
	case !precheck && isExact && s.e.Cat.EventInsert.CheckedSequence != "":
		// The insert itself checks the version (its first row's sequence
		// number is NULL unless the stream is at exact).
		return exact, seqChecked, nil
	case !precheck && st.Expected == Any && len(st.Events) == 1 && s.plan.computes:
		// One event: the database computes its sequence number in the
		// insert. (For a batch, one read of the version is cheaper than a
		// subquery per row.)
		return 0, seqComputed, nil
	}
	actual, owner, err := s.streamVersion(ctx, q, table, st.AggregateID)
	if err != nil {
		return 0, seqKnown, err
	}
	if owner != "" && owner != st.AggregateType {
		return 0, seqKnown, &AggregateIDTakenError{Table: table, AggregateID: st.AggregateID, AggregateType: st.AggregateType, OwnerType: owner}
	}
	if !versionMatches(st.Expected, actual) {
		return 0, seqKnown, &ConcurrencyError{AggregateType: st.AggregateType, AggregateID: st.AggregateID, Expected: st.Expected, Actual: actual}
	}
	return actual, seqKnown, nil
}

// insertChunks writes rows as one multi-row INSERT per table and chunk, in
// their order; row.index says where each row's position (and, when seqs is
// not nil, sequence number) goes. On an error it returns the table of the
// chunk that failed.
func (s *Store) insertChunks(ctx context.Context, q queryer, rows []row, res Appended, seqs []int64) (string, error) {
	for start := 0; start < len(rows); {
		chunk := s.plan.maxRows(rows[start])
		end := start + 1
		// A chunk shares one table and one row shape: a row whose sequence
		// number the database checks starts a chunk of its own.
		for end < len(rows) && end-start < chunk && rows[end].table == rows[start].table &&
			!rows[end].checked && rows[end].computed == rows[start].computed {
			end++
		}
		// A computed row's offset counts the rows of its stream before it
		// in the same statement: the statement's subquery sees the rows of
		// the earlier statements of the transaction, not its own.
		offsets := map[string]int64{}
		for i := start; i < end; i++ {
			if rows[i].computed {
				offsets[rows[i].stream]++
				rows[i].vals[pSequenceOffset] = offsets[rows[i].stream]
			}
		}
		if err := s.insertRows(ctx, q, rows[start:end], res, seqs); err != nil {
			return rows[start].table, err
		}
		start = end
	}
	return "", nil
}

// eventRow is the insert row of event ev of st at sequence number seq.
func (s *Store) eventRow(table string, st Stream, ev Event, seq int64, part int, now time.Time) (row, error) {
	id := ev.ID
	if id == "" {
		u, err := uuid.NewV7()
		if err != nil {
			return row{}, err
		}
		id = u.String()
	} else if u, err := uuid.Parse(id); err == nil {
		// Canonical lower case, 36 characters (checkStreams parsed it):
		// "ABC…", "{abc…}" and "urn:uuid:abc…" are one id on every
		// engine, whatever its collation, and fit the id column.
		id = u.String()
	}
	at := ev.OccurredAt
	if at.IsZero() {
		at = now
	}
	var meta any
	if ev.Metadata != nil {
		meta = string(ev.Metadata)
	}
	r := row{table: table}
	r.vals[pID], r.vals[pAggregateID], r.vals[pAggregateType] = id, st.AggregateID, st.AggregateType
	r.vals[pSequenceNo], r.vals[pEventType], r.vals[pEventRevision] = seq, ev.Type, ev.Revision
	r.vals[pPayload], r.vals[pMetadata], r.vals[pOccurredAt] = string(ev.Payload), meta, s.e.Cat.Facts.CutEventTime(at)
	r.vals[pPartitionKey] = part
	return r, nil
}

// The event insert's bind parameters, by name and by slot in row.vals.
var rowParams = dialect.EventInsertBinds

const (
	pID = iota
	pAggregateID
	pAggregateType
	pSequenceNo
	pSequenceOffset
	pEventType
	pEventRevision
	pPayload
	pMetadata
	pOccurredAt
	pPartitionKey
	pGlobalPosition
	pExpectedVersion
	nParams
)

// insertRows runs one chunk of rows (one table, one shape) through the
// engine's insert. Where the insert returns them (it draws them, or a
// counter row's ComputedTail returns them), positions go to
// res.Positions and, when seqs is not nil, sequence numbers to seqs (both
// by row index).
func (s *Store) insertRows(ctx context.Context, tx queryer, rows []row, res Appended, seqs []int64) error {
	vals := make([][]any, len(rows))
	for i := range rows {
		vals[i] = rows[i].vals[:]
	}
	shape := s.plan.shape(rows[0])
	if !s.plan.returns(shape) {
		_, err := s.events.Exec(ctx, tx, shape, vals)
		return err
	}
	rs, err := s.events.Query(ctx, tx, shape, vals)
	if err != nil {
		return err
	}
	defer rs.Close()
	i := 0
	for rs.Next() {
		if i >= len(rows) {
			return errors.New("event insert returned more rows than it inserted")
		}
		var seq int64
		if err := rs.Scan(&res.Positions[rows[i].index], &seq); err != nil {
			return err
		}
		if seqs != nil {
			seqs[rows[i].index] = seq
		}
		if rows[i].computed {
			res.Versions[rows[i].stream] = max(res.Versions[rows[i].stream], seq)
		}
		i++
	}
	if err := rs.Err(); err != nil {
		return err
	}
	if i != len(rows) {
		return fmt.Errorf("event insert returned %d rows for %d events", i, len(rows))
	}
	return nil
}
