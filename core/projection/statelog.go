package projection

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// stateMessage is a read model's state as its topic carries it.
type stateMessage struct {
	Key, Type         string
	Payload, Metadata []byte
	CascadeDepth      int
	Deleted           bool
}

// stateLog is the projection's read-model topic as the apply writes it.
type stateLog interface {
	publish(ctx context.Context, tx *sql.Tx, m stateMessage) (id string, err error)
	// publishAll publishes msgs in order in as few statements as it can.
	publishAll(ctx context.Context, tx *sql.Tx, msgs []stateMessage) (ids []string, err error)
}

type readModelLog struct{ t *topic.ReadModelTopic }

func openStateLog(ctx context.Context, e *engine.Engine, name string) (readModelLog, error) {
	t, err := topic.OpenReadModel(ctx, e, name)
	if err != nil {
		return readModelLog{}, fmt.Errorf("projection %q: opening its read-model topic: %w", name, err)
	}
	return readModelLog{t: t}, nil
}

func (l readModelLog) publish(ctx context.Context, tx *sql.Tx, m stateMessage) (string, error) {
	ids, err := l.publishAll(ctx, tx, []stateMessage{m})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

func (l readModelLog) publishAll(ctx context.Context, tx *sql.Tx, msgs []stateMessage) ([]string, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]topic.ReadModelMessage, len(msgs))
	for i, m := range msgs {
		out[i] = topic.ReadModelMessage{Key: m.Key, Type: m.Type, Payload: m.Payload,
			Metadata: m.Metadata, CascadeDepth: m.CascadeDepth, Deleted: m.Deleted}
	}
	pub, err := l.t.PublishTx(ctx, tx, out...)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(pub))
	for i, p := range pub {
		ids[i] = p.ID
	}
	return ids, nil
}
