package topic

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/log/position"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// ReadModelMarkTopic is the high-water-mark row every read-model topic of
// a datasource shares where one sequence numbers them all
// (SequenceXIDHorizon). On a counter engine each topic's committed counter
// is its mark and there is no mark row.
const ReadModelMarkTopic = "read-model-topics"

// ReadModelSourcePrefix is put before a read-model topic's name to make
// its source name (its consumers' checkpoints, TOPIC_COMPACTION's
// topic_name), so it never meets the capture topic's or the event store's.
const ReadModelSourcePrefix = "read-model:"

// MaxReadModelTopicLength is the most characters a read-model topic's name
// may have: its source name (ReadModelSourcePrefix + name) must fit a
// VARCHAR(255) column.
const MaxReadModelTopicLength = MaxKeyLength - len(ReadModelSourcePrefix)

// ReadModelMessage is what a projection publishes on its read-model topic:
// a read model's state after an apply, or a tombstone with its last state.
type ReadModelMessage struct {
	// Key is the read model's key (read_model_key), required, at most
	// MaxKeyLength characters; the partition is computed from it.
	Key string
	// Type is the read model's type (read_model_type), 1..255 characters.
	Type string
	// Payload is the state, a JSON document.
	Payload []byte
	// Metadata is the causing message's metadata, a JSON document or nil.
	Metadata []byte
	// CascadeDepth is how many applies along a chain led here, at least 1.
	CascadeDepth int
	// Deleted marks a tombstone.
	Deleted bool
	// OccurredAt is when it was appended; zero means now. Stored in UTC,
	// cut to the engine's declared digits.
	OccurredAt time.Time
}

// Published is one published message: its new id (a UUIDv7, what a query
// table stores as message_id) and its position in the topic.
type Published struct {
	ID       string
	Position int64
}

// ReadModelRecord is a read-model message as stored.
type ReadModelRecord struct {
	ID           string
	Topic        string
	Position     int64
	Partition    int
	Key          string
	Type         string
	Revision     int
	Payload      []byte
	Metadata     []byte // nil for NULL
	CascadeDepth int
	Deleted      bool
	OccurredAt   time.Time
}

// ReadModelTopic is one read-model topic (a projection's) on one engine:
// its messages are the rows of READ_MODEL_CAPTURE_RECORDS whose topic is
// its name.
type ReadModelTopic struct {
	e    *engine.Engine
	name string
	// shared: one sequence numbers every topic and the mark is the shared
	// row ReadModelMarkTopic; otherwise the topic's committed counter is
	// its mark.
	shared bool
	ins    *logInsert
}

// OpenReadModel returns the read-model topic name of e. On a counter
// engine it seeds the topic's counter row at 0 when it is missing; where
// one sequence numbers every topic it seeds the shared mark row and moves
// the sequence past the topic's highest stored position and past the mark
// when it is behind them (a recreated sequence). A seed never overwrites.
// On a read-only engine it writes nothing, and a missing row is an
// *engine.SchemaMissingError.
func OpenReadModel(ctx context.Context, e *engine.Engine, name string) (*ReadModelTopic, error) {
	if err := checkTopicName(name, e.Cat.KeysIgnoreTrailingSpaces); err != nil {
		return nil, err
	}
	t := &ReadModelTopic{e: e, name: name, shared: e.Cat.Positions == dialect.SequenceXIDHorizon}
	posTable := e.Names.Shared[engine.ReadModelPositions.Placeholder]
	t.ins = &logInsert{e: e, name: "read-model insert", positions: position.Of(e).TopicWriter(name), slot: rmTopicPosition,
		records: e.NewInsert("read-model insert", e.Cat.ReadModelInsert, dialect.ReadModelInsertBinds),
		shape:   engine.InsertShape{Tables: map[string]string{"read_model_capture_positions_table": posTable}}}
	if e.ReadOnly() {
		if _, err := t.Mark(ctx); errors.Is(err, sql.ErrNoRows) {
			return nil, &engine.SchemaMissingError{What: "the position row of read-model topic " + name, Cause: err}
		} else if err != nil {
			return nil, err
		}
		return t, nil
	}
	if !t.shared {
		if err := e.SeedTopicPosition(ctx, e.DB, name); err != nil {
			return nil, err
		}
		return t, nil
	}
	if err := e.SeedMark(ctx, e.DB, ReadModelMarkTopic); err != nil {
		return nil, err
	}
	if _, err := stmt.ExecRMTopicSequenceFloor(ctx, e, e.DB, stmt.RMTopicSequenceFloorParams{Topic: name, MarkTopic: ReadModelMarkTopic}); err != nil {
		return nil, fmt.Errorf("moving the read-model sequence past topic %s: %w", name, err)
	}
	return t, nil
}

// ReadModelAdvancer returns the advancer of the read-model topics' shared
// mark row on e (opts with Topic and PositionTable set), or nil on a
// counter engine, where each topic's committed counter is its mark and
// nothing needs advancing. One per datasource serves every topic.
func ReadModelAdvancer(e *engine.Engine, opts hwm.Options) *hwm.Advancer {
	if e.Cat.Positions != dialect.SequenceXIDHorizon {
		return nil
	}
	opts.Topic, opts.PositionTable = ReadModelMarkTopic, e.Names.Shared[engine.ReadModelPositions.Placeholder]
	return hwm.New(e, opts)
}

// checkTopicName refuses a name the topic column (and its source name)
// cannot hold, before any SQL.
func checkTopicName(name string, pad bool) error {
	switch {
	case name == "":
		return &InvalidTopicNameError{Name: name, Reason: "is empty"}
	case len([]rune(name)) > MaxReadModelTopicLength:
		return &InvalidTopicNameError{Name: name, Reason: fmt.Sprintf("is over %d characters long", MaxReadModelTopicLength)}
	case pad && name[len(name)-1] == ' ':
		return &InvalidTopicNameError{Name: name, Reason: "ends in a space, which this engine ignores in comparisons"}
	}
	if err := checkKey(0, "topic", name); err != nil {
		return &InvalidTopicNameError{Name: name, Reason: err.Error()}
	}
	return nil
}

// Name is the topic's name (the topic column: the projection's name).
func (t *ReadModelTopic) Name() string { return t.name }

// SourceName is the name its consumers record their checkpoints under:
// ReadModelSourcePrefix + Name.
func (t *ReadModelTopic) SourceName() string { return ReadModelSourcePrefix + t.name }

// Partitions is the topic's partition count, the engine's.
func (t *ReadModelTopic) Partitions() int { return t.e.Partitions }

// Mark returns the topic's high-water mark: every position at or below it
// is committed or abandoned. A topic never seeded reads as sql.ErrNoRows
// (wrapped).
func (t *ReadModelTopic) Mark(ctx context.Context) (int64, error) {
	return t.mark(ctx, t.e.DB)
}

// Bounds returns the topic's mark and start; the start is 0, since no
// message of a read-model topic is deleted below a position (compaction
// deletes superseded messages of a key, not a prefix).
func (t *ReadModelTopic) Bounds(ctx context.Context) (mark, start int64, err error) {
	mark, err = t.Mark(ctx)
	return mark, 0, err
}

// mark reads the mark on q: the shared mark row, or the topic's committed
// counter (a plain read, which only ever sees committed values; a publish
// holds the row until it commits).
func (t *ReadModelTopic) mark(ctx context.Context, q engine.Querier) (int64, error) {
	if t.shared {
		b, err := stmt.QueryRowTopicBounds(ctx, t.e, q, stmt.TopicBoundsParams{Topic: ReadModelMarkTopic})
		if err != nil {
			return 0, fmt.Errorf("reading the mark of read-model topic %s: %w", t.name, err)
		}
		return b.HighWaterMark, nil
	}
	r, err := stmt.QueryRowRMTopicEnd(ctx, t.e, q, stmt.RMTopicEndParams{Topic: t.name})
	if err != nil {
		return 0, fmt.Errorf("reading the mark of read-model topic %s: %w", t.name, err)
	}
	return r.Val, nil
}
