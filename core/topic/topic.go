// Package topic is the topics that are not the event store: the capture
// topic (Topic), non-event-sourced messages published to
// EVENT_CAPTURE_RECORDS, numbered by their own position object
// (EVENT_CAPTURE_GLOBAL_POSITION) through the engine's position seam,
// readable up to the topic's own high-water mark, and deleted by retention
// no further than the slowest consumer checkpoint on the topic; and the
// read-model topics (ReadModelTopic), a projection's states published in
// its apply's transaction to READ_MODEL_CAPTURE_RECORDS, many topics in one
// table. Both publish through one insert (logInsert) and read through
// core/log.
package topic

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/log"
	"github.com/tidemarkdb/tidemark/core/log/position"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// CaptureTopic is the capture topic's name: its row of the high-water-mark
// store and the source_name its consumers record their checkpoints under.
const CaptureTopic = "event-capture"

// MaxKeyLength is the most characters a message key may have (the column
// is VARCHAR(255) / NVARCHAR(255) on every engine).
const MaxKeyLength = log.MaxKeyLength

// Message is what a caller publishes.
type Message struct {
	// ID is the message's UUID; empty means a new UUIDv7.
	ID string
	// Key is the message key (e.g. an account id) the partition is
	// computed from; empty means a message without one (NULL).
	Key      string
	Type     string // the stored event-type identifier, 1..255 characters
	Revision int
	Payload  []byte // a JSON document
	Metadata []byte // a JSON document or nil
	// OccurredAt is when it happened; zero means now. Stored in UTC, cut to
	// the engine's declared digits (EngineFacts.CutEventTime).
	OccurredAt time.Time
}

// Record is a message as stored.
type Record struct {
	ID         string
	Position   int64
	Partition  int
	Type       string
	Revision   int
	Payload    []byte
	Metadata   []byte
	OccurredAt time.Time
	Key        string // "" for a message without a key
}

// Topic is the capture topic on one engine.
type Topic struct {
	e    *engine.Engine
	name string
	// posTable is the resolved name of the topic's position object.
	posTable string
	// positions is the position strategy's write side for posTable.
	positions position.Writer
	// writeMu queues this process's own-transaction publishes from before
	// the counter is taken to the commit, where positions queue anyway (a
	// counter row) or the engine runs one writer at a time (SQLite).
	writeMu sync.Mutex
	nudger  func()
	// ins is the capture insert (Catalogue.CaptureInsert).
	ins *logInsert
}

// New returns the capture topic of e and seeds its mark row at 0 when it
// is missing (never overwriting it). On a read-only engine it seeds
// nothing: a missing mark row is an *engine.SchemaMissingError.
func New(ctx context.Context, e *engine.Engine) (*Topic, error) {
	t := &Topic{e: e, name: CaptureTopic, posTable: e.Names.Shared[engine.CapturePositions.Placeholder]}
	t.positions = position.Of(e).Writer(engine.CapturePositions)
	t.ins = &logInsert{e: e, name: "capture insert", positions: t.positions, slot: bGlobalPosition,
		records: e.NewInsert("capture insert", e.Cat.CaptureInsert, dialect.CaptureInsertBinds),
		shape:   engine.InsertShape{Tables: map[string]string{"event_capture_global_position_table": t.posTable}}}
	if e.ReadOnly() {
		if _, err := e.ReadMarkRow(ctx, e.DB, t.name); errors.Is(err, sql.ErrNoRows) {
			return nil, &engine.SchemaMissingError{What: "the high-water-mark row of topic " + t.name, Cause: err}
		} else if err != nil {
			return nil, err
		}
		return t, nil
	}
	if err := e.SeedMark(ctx, e.DB, t.name); err != nil {
		return nil, err
	}
	return t, nil
}

// Name is the topic's name (its mark row, the consumers' source_name).
func (t *Topic) Name() string { return t.name }

// Partitions is the topic's partition count, the engine's: a message's
// partition is stamped from its key among them at publish.
func (t *Topic) Partitions() int { return t.e.Partitions }

// Advancer returns a high-water-mark advancer for this topic: opts with
// Topic and PositionTable set to the topic's own. Publish nudges it after
// each commit.
func (t *Topic) Advancer(opts hwm.Options) *hwm.Advancer {
	opts.Topic, opts.PositionTable = t.name, t.posTable
	a := hwm.New(t.e, opts)
	t.nudger = a.Nudge
	return a
}

// Bounds returns the topic's mark (every position at or below it is
// committed or abandoned) and start (every message at or below it was
// deleted by retention).
func (t *Topic) Bounds(ctx context.Context) (mark, start int64, err error) {
	return t.bounds(ctx, t.e.DB)
}

func (t *Topic) bounds(ctx context.Context, q engine.Querier) (mark, start int64, err error) {
	b, err := stmt.QueryRowTopicBounds(ctx, t.e, q, stmt.TopicBoundsParams{Topic: t.name})
	mark, start = b.HighWaterMark, b.TopicStart
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("high-water mark row of topic %s is missing", t.name)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading the bounds of topic %s: %w", t.name, err)
	}
	return mark, start, nil
}

// Mark returns the topic's high-water mark.
func (t *Topic) Mark(ctx context.Context) (int64, error) {
	m, _, err := t.Bounds(ctx)
	return m, err
}
