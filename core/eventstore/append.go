package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/log/position"
)

// anyRetries bounds internal retries of an Any append that lost a race.
const anyRetries = 16

type row struct {
	table    string
	vals     [nParams]any
	index    int    // position in the append's event order
	caller   int    // the caller of the batch it belongs to
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

// appendAlone is an append run as a batch of one, with its retries.
// afterTransient tells that an earlier try (a group commit's) may have
// committed the append's events.
func (s *Store) appendAlone(ctx context.Context, streams []Stream, afterTransient bool) (Appended, error) {
	p := newPending(ctx, streams)
	s.run(ctx, []*pending{p}, afterTransient)
	return p.res, p.err
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
	p := newPending(ctx, streams)
	_, err := s.fill(ctx, tx, []*pending{p}, nil, nil, true)
	if err == nil {
		err = p.err
	}
	if err != nil {
		return Appended{}, s.dbErr(err)
	}
	return p.res, nil
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
