package eventstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Load reads an aggregate's events with sequence_no > afterSequence (use -1
// for the whole stream), in sequence order.
func (s *Store) Load(ctx context.Context, aggregateType, aggregateID string, afterSequence int64) ([]Recorded, error) {
	rows, err := stmt.QueryEventStream(ctx, s.e, s.e.DB, stmt.EventStreamParams{AggregateID: aggregateID,
		AggregateType: aggregateType, AfterSequence: afterSequence, EventStoreTable: s.eventTable(aggregateType)})
	if err != nil {
		return nil, fmt.Errorf("loading %s %q: %w", aggregateType, aggregateID, err)
	}
	evs, err := scanEvents(rows)
	return evs, s.dbErr(err)
}

// Mark returns the event store's high-water mark: every position at or below
// it is committed or abandoned for good.
func (s *Store) Mark(ctx context.Context) (int64, error) {
	return ReadMark(ctx, s.e, engine.EventStoreTopic)
}

// ReadMark reads a topic's high-water mark (through the engine's one
// reader of the mark row).
func ReadMark(ctx context.Context, e *engine.Engine, topic string) (int64, error) {
	r, err := e.ReadMarkRow(ctx, e.DB, topic)
	return r.Mark, err
}

// ReadAll reads up to limit events of every event table with global position
// in (after, mark], merged in global order. It never returns an event above
// the high-water mark.
//
// The mark and the page are read in one read-only transaction, on one
// connection: a pool spread over replicas (or cluster nodes) cannot read
// the mark on one server and the page on another that is behind.
func (s *Store) ReadAll(ctx context.Context, after int64, limit int) ([]Recorded, error) {
	page, _, err := s.readPage(ctx, -1, after, limit)
	return page, err
}

// ReadPartition is ReadAll restricted to one partition.
func (s *Store) ReadPartition(ctx context.Context, partition int, after int64, limit int) ([]Recorded, error) {
	if partition < 0 || partition >= s.e.Partitions {
		return nil, fmt.Errorf("partition %d is out of range 0..%d", partition, s.e.Partitions-1)
	}
	page, _, err := s.readPage(ctx, partition, after, limit)
	return page, err
}

// ReadUpTo reads like ReadAll but with an explicit upper bound, which must
// not exceed the mark. The bound must come from the server the page is read
// from: with a pool spread over replicas, read with ReadAll (or Follow),
// which read the mark and the page together.
func (s *Store) ReadUpTo(ctx context.Context, after, upto int64, limit int) ([]Recorded, error) {
	return s.log().UpTo(ctx, -1, after, upto, limit)
}

// ReadPage reads the high-water mark and the page of up to limit events in
// (after, mark] (of one partition, or of all when partition is -1) in one
// read-only transaction, and returns both: a page shorter than limit means
// every event up to that mark was read. A caller that advances past a
// short page must advance to this mark, never to one it read separately
// (that one may come from another server, further ahead).
func (s *Store) ReadPage(ctx context.Context, partition int, after int64, limit int) ([]Recorded, int64, error) {
	if partition < -1 || partition >= s.e.Partitions {
		return nil, 0, fmt.Errorf("partition %d is out of range -1..%d", partition, s.e.Partitions-1)
	}
	return s.readPage(ctx, partition, after, limit)
}

// readPage is ReadPage: the mark and the page in one read-only transaction
// (engine.BeginRead), on the server the mark came from.
func (s *Store) readPage(ctx context.Context, partition int, after int64, limit int) ([]Recorded, int64, error) {
	return s.log().Page(ctx, partition, after, limit)
}

// Log describes the event tables as a log (log.Source): what a reader over
// any log, such as a consumer's source, builds on.
func (s *Store) Log() log.Source[Recorded] { return s.log() }

// log describes the event tables to the log's page read and Follow: the
// mark of engine.EventStoreTopic, no start (events are never deleted).
// Follow streams with one event table (several are merged in position
// order, which needs the whole page) and unless the pool has one
// connection: the handler then runs while the page's read transaction
// holds a connection, so a handler that uses the database would wait for
// itself.
func (s *Store) log() log.Source[Recorded] {
	return log.Source[Recorded]{
		Begin: s.e.BeginRead,
		Mark: func(ctx context.Context, q engine.Querier, _ int64) (int64, error) {
			r, err := s.e.ReadMarkRow(ctx, q, engine.EventStoreTopic)
			return r.Mark, err
		},
		Range:    s.readRange,
		Position: func(r Recorded) int64 { return r.GlobalPosition },
		Err:      s.dbErr,
		Streams:  len(s.e.Names.EventTables) == 1 && s.e.DB.Stats().MaxOpenConnections != 1,
	}
}

// readRange calls each with the events in (after, upto] of partition (-1
// for all), at most limit, in position order. One table's rows are handed
// on as they are scanned; several tables' are merged first.
func (s *Store) readRange(ctx context.Context, q queryer, partition int, after, upto int64, limit int, each func(Recorded) error) error {
	if tables := s.e.Names.EventTables; len(tables) == 1 {
		rows, err := s.queryRange(ctx, q, tables[0], partition, after, upto, limit)
		if err != nil {
			return fmt.Errorf("reading %s: %w", tables[0], err)
		}
		defer rows.Close()
		for rows.Next() {
			ev, err := eventOf(rows.Row())
			if err != nil {
				return err
			}
			if err := each(ev); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	var all []Recorded
	// Each table returns its first limit rows; merging them in position
	// order and keeping the first limit gives the global page.
	for _, t := range s.e.Names.EventTables {
		rows, err := s.queryRange(ctx, q, t, partition, after, upto, limit)
		if err != nil {
			return fmt.Errorf("reading %s: %w", t, err)
		}
		evs, err := scanEvents(rows)
		if err != nil {
			return err
		}
		all = append(all, evs...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].GlobalPosition < all[j].GlobalPosition })
	for _, ev := range all[:min(len(all), limit)] {
		if err := each(ev); err != nil {
			return err
		}
	}
	return nil
}

// queryRange runs the range read of table: of one partition, or of all
// (partition -1).
func (s *Store) queryRange(ctx context.Context, q queryer, table string, partition int, after, upto int64, limit int) (stmt.Rows[stmt.EventRangeRow], error) {
	if partition >= 0 {
		return stmt.QueryEventPartitionRange(ctx, s.e, q, stmt.EventPartitionRangeParams{Partition: partition,
			After: after, Upto: upto, Limit: limit, EventStoreTable: table})
	}
	return stmt.QueryEventRange(ctx, s.e, q, stmt.EventRangeParams{After: after, Upto: upto, Limit: limit, EventStoreTable: table})
}

func scanEvents(rows stmt.Rows[stmt.EventRangeRow]) ([]Recorded, error) {
	defer rows.Close()
	var out []Recorded
	for rows.Next() {
		r, err := eventOf(rows.Row())
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// eventOf is the event an event row holds. Payload and metadata were
// scanned straight into []byte (one copy; a NULL metadata stays nil).
func eventOf(r stmt.EventRangeRow, err error) (Recorded, error) {
	if err != nil {
		return Recorded{}, err
	}
	return Recorded{ID: string(r.ID), AggregateID: r.AggregateID, AggregateType: r.AggregateType, SequenceNo: r.SequenceNo,
		Type: r.EventType, Revision: r.EventRevision, Payload: r.Payload, Metadata: r.Metadata,
		OccurredAt: time.Time(r.OccurredAt), PartitionKey: int(r.PartitionKey), GlobalPosition: r.GlobalPosition}, nil
}
