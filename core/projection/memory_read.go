package projection

import (
	"context"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/engine"
)

// Get returns a copy of key's read model (the aggregate id, or the
// projection's name for Global scope); false when there is none.
func (m *Memory[S]) Get(key string) (S, bool, error) {
	m.mu.RLock()
	stored, ok := m.models[key]
	m.mu.RUnlock()
	if !ok {
		var zero S
		return zero, false, nil
	}
	s, err := m.p.decodeState(key, stored)
	return s, err == nil, err
}

// All returns a copy of every read model, by key, as of one position.
func (m *Memory[S]) All() (map[string]S, error) {
	m.mu.RLock()
	snap := make(map[string][]byte, len(m.models))
	for k, v := range m.models {
		snap[k] = v // the bytes are never written again: an apply stores new ones
	}
	m.mu.RUnlock()
	out := make(map[string]S, len(snap))
	for k, v := range snap {
		s, err := m.p.decodeState(k, v)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// Len is the number of read models.
func (m *Memory[S]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.models)
}

// Position is the global position the Memory has passed: every event at
// or below it is applied (it moves past positions that hold no event, and
// events no listener is declared for). 0 before the first apply.
func (m *Memory[S]) Position() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.pos
}

// Sync waits until every event committed before the call is applied: it
// reads the event store's committed end (the highest position handed out)
// and waits until Position reaches it, which needs a Run running and the
// event store's high-water mark advanced past that end (an advancer
// running, in this process or another). It returns ctx's error when ctx
// ends first, and the error that stopped Run when Run failed.
func (m *Memory[S]) Sync(ctx context.Context) error {
	table := m.e.Names.Shared[engine.EventStorePositions.Placeholder]
	end, err := m.e.Positions.CommittedEnd(ctx, m.e.DB, table)
	if err != nil {
		return fmt.Errorf("projection %q: sync: %w", m.p.name, err)
	}
	for {
		m.mu.RLock()
		pos, moved, failed := m.pos, m.moved, m.failed
		m.mu.RUnlock()
		switch {
		case pos >= end:
			return nil
		case failed != nil:
			return failed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-moved:
		}
	}
}
