package eventstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/core/stmt"
)

// Snapshot is an aggregate's state as of a sequence number.
type Snapshot struct {
	AggregateType string
	AggregateID   string
	SequenceNo    int64
	// Version is the snapshot's schema revision (default 1).
	Version   int
	Payload   []byte
	CreatedAt time.Time
}

// SaveSnapshot stores a snapshot. A second snapshot at the same sequence
// number is refused by the database's unique constraint.
func (s *Store) SaveSnapshot(ctx context.Context, snap Snapshot) error {
	if err := s.checkKey("aggregate id", snap.AggregateID); err != nil {
		return err
	}
	if err := s.checkKey("aggregate type", snap.AggregateType); err != nil {
		return err
	}
	if err := checkUTF8("snapshot payload", snap.Payload); err != nil {
		return err
	}
	if snap.Version == 0 {
		snap.Version = 1
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if snap.CreatedAt.IsZero() {
		snap.CreatedAt = time.Now()
	}
	_, err = stmt.ExecSnapshotInsert(ctx, s.e, s.e.DB, stmt.SnapshotInsertParams{ID: id.String(), AggregateID: snap.AggregateID,
		AggregateType: snap.AggregateType, SequenceNo: snap.SequenceNo, SnapshotVersion: snap.Version, Payload: string(snap.Payload),
		CreatedAt: snap.CreatedAt.UTC(), AggregateSnapshotsTable: s.snapshotTable(snap.AggregateType)})
	if err != nil {
		return fmt.Errorf("saving snapshot of %s %q: %w", snap.AggregateType, snap.AggregateID, err)
	}
	return nil
}

// LatestSnapshot returns the newest snapshot of an aggregate with the given
// snapshot version, or ok=false when there is none.
func (s *Store) LatestSnapshot(ctx context.Context, aggregateType, aggregateID string, version int) (Snapshot, bool, error) {
	if version == 0 {
		version = 1
	}
	snap := Snapshot{AggregateType: aggregateType, AggregateID: aggregateID, Version: version}
	r, err := stmt.QueryRowSnapshotLatest(ctx, s.e, s.e.DB, stmt.SnapshotLatestParams{AggregateID: aggregateID,
		AggregateType: aggregateType, SnapshotVersion: version, AggregateSnapshotsTable: s.snapshotTable(aggregateType)})
	if errors.Is(err, sql.ErrNoRows) {
		return Snapshot{}, false, nil
	}
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("loading snapshot of %s %q: %w", aggregateType, aggregateID, err)
	}
	snap.SequenceNo, snap.Payload, snap.CreatedAt = r.SequenceNo, []byte(r.Payload), time.Time(r.CreatedAt)
	return snap, true, nil
}

// LoadWithSnapshot returns the latest snapshot (if any) and the events after it.
func (s *Store) LoadWithSnapshot(ctx context.Context, aggregateType, aggregateID string, version int) (*Snapshot, []Recorded, error) {
	snap, ok, err := s.LatestSnapshot(ctx, aggregateType, aggregateID, version)
	if err != nil {
		return nil, nil, err
	}
	after := int64(-1)
	var sp *Snapshot
	if ok {
		after, sp = snap.SequenceNo, &snap
	}
	evs, err := s.Load(ctx, aggregateType, aggregateID, after)
	return sp, evs, err
}
