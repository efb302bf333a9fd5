package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/reflectx"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// ConsumerStatus is one consumer as an operator sees it.
type ConsumerStatus struct {
	ID         string     `json:"id"`
	Type       string     `json:"type"`
	Name       string     `json:"name"`
	State      State      `json:"state"`
	HaltReason HaltReason `json:"halt_reason,omitempty"`
	Epoch      int64      `json:"epoch"`
	StateSince time.Time  `json:"state_since"`
	// Partitions are its checkpoints, by source and partition.
	Partitions []PartitionLag `json:"partitions"`
	// Undelivered counts its undelivered rows by status (statuses without
	// rows are absent).
	Undelivered map[DeliveryStatus]int64 `json:"undelivered"`
	// Leases are its partition leases: which instance owns which partition
	// under which generation. Status fills it (Leased false for a consumer
	// run without leases); List leaves it nil.
	Leases *LeaseView `json:"leases,omitempty"`
}

// Ref is the consumer's (type, name).
func (s ConsumerStatus) Ref() Ref { return Ref{Type: s.Type, Name: s.Name} }

// PartitionLag is one checkpoint with its source's mark and the lag.
type PartitionLag struct {
	Source    string `json:"source"`
	Partition int    `json:"partition"`
	// Checkpoint is nil while the consumer has recorded nothing there.
	Checkpoint *int64 `json:"checkpoint"`
	// Mark is the source's high-water mark; nil when the database has no
	// mark row for the source's topic (then Lag is 0).
	Mark *int64 `json:"mark"`
	// Lag is Mark minus Checkpoint (a missing checkpoint counts as 0).
	Lag int64 `json:"lag"`
	// IncompleteThrough is the incomplete-history mark; nil while the read
	// is complete as far as the framework knows.
	IncompleteThrough *int64 `json:"incomplete_through"`
}

// adminUndeliveredRow is the sqlx scan target of UndeliveredList (an
// UndeliveredRow as the columns come).
type adminUndeliveredRow struct {
	ID        engine.UUIDText `db:"id"`
	Source    string          `db:"source_name"`
	Partition int             `db:"partition_no"`
	Key       string          `db:"resolved_key"`
	Position  int64           `db:"message_position"`
	Status    string          `db:"status"`
	Failures  int             `db:"failure_count"`
	NextRetry engine.UTCTime  `db:"next_retry_at"` // zero: NULL
	Reason    sql.NullString  `db:"failure_reason"`
	Recorded  engine.UTCTime  `db:"recorded_at"`
}

// adminMapper maps db tags to the column labels the engine returns: H2, HSQLDB
// and Firebird fold unquoted names to upper case.
func (r *Registry) adminMapper() *reflectx.Mapper {
	fold := func(s string) string { return s }
	if r.e.Cat.Identity.FoldsUnquotedTo == "upper" {
		fold = strings.ToUpper
	}
	return reflectx.NewMapperTagFunc("db", fold, fold)
}

// adminSelect runs statement id on q and scans every row into *dest (a
// slice of structs) with sqlx: operator reads, off the hot path.
func adminSelect[R any](ctx context.Context, r *Registry, q engine.Querier, id dialect.StatementID, args map[string]any) ([]R, error) {
	rows, err := r.e.Query(ctx, q, id, nil, args)
	if err != nil {
		return nil, err
	}
	xr := &sqlx.Rows{Rows: rows, Mapper: r.adminMapper()}
	defer xr.Close()
	var out []R
	for xr.Next() {
		var v R
		if err := xr.StructScan(&v); err != nil {
			return nil, r.e.Errors.Wrap(err)
		}
		out = append(out, v)
	}
	return out, r.e.Errors.Wrap(xr.Err())
}

// List returns every consumer with its checkpoints, lag and undelivered
// counts, ordered by type and name.
func (o *Operator) List(ctx context.Context) ([]ConsumerStatus, error) {
	rows, err := o.r.e.Query(ctx, o.r.e.DB, dialect.AdminConsumerList, nil, map[string]any{})
	if err != nil {
		return nil, fmt.Errorf("listing consumers: %w", err)
	}
	var cs []Consumer
	for rows.Next() {
		c, err := o.r.scanRow(rows)
		if err != nil {
			rows.Close()
			return nil, o.r.e.Errors.Wrap(err)
		}
		cs = append(cs, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, o.r.e.Errors.Wrap(err)
	}
	// The database orders by its collation; people read byte order.
	sort.Slice(cs, func(i, j int) bool { return cs[i].Type+"\x00"+cs[i].Name < cs[j].Type+"\x00"+cs[j].Name })
	marks := map[string]*int64{}
	out := make([]ConsumerStatus, 0, len(cs))
	for _, c := range cs {
		s, err := o.status(ctx, c, marks)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Status returns one consumer's state, checkpoints with lag, undelivered
// counts and partition leases.
func (o *Operator) Status(ctx context.Context, ref Ref) (ConsumerStatus, error) {
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return ConsumerStatus{}, err
	}
	s, err := o.status(ctx, c, map[string]*int64{})
	if err != nil {
		return s, err
	}
	l, err := o.leases(ctx, Ref{Type: c.Type, Name: c.Name})
	if err != nil {
		return s, err
	}
	s.Leases = &l
	return s, nil
}

type adminCheckpointRow struct {
	Source    string        `db:"source_name"`
	Partition int           `db:"partition_no"`
	Position  sql.NullInt64 `db:"position"`
	Epoch     sql.NullInt64 `db:"epoch"`
}

type adminIncompleteRow struct {
	Source     string        `db:"source_name"`
	Partition  int           `db:"partition_no"`
	Incomplete sql.NullInt64 `db:"incomplete_through"`
}

type adminCountRow struct {
	Status string `db:"status"`
	N      int64  `db:"n"`
}

// status reads c's checkpoints, marks (cached in marks by topic) and
// counts.
func (o *Operator) status(ctx context.Context, c Consumer, marks map[string]*int64) (ConsumerStatus, error) {
	s := ConsumerStatus{ID: c.ID, Type: c.Type, Name: c.Name, State: c.State, HaltReason: c.HaltReason,
		Epoch: c.Epoch, StateSince: c.StateSince, Undelivered: map[DeliveryStatus]int64{}}
	arg := map[string]any{"consumer_id": c.ID}
	cps, err := adminSelect[adminCheckpointRow](ctx, o.r, o.r.e.DB, dialect.CheckpointRead, arg)
	if err != nil {
		return s, fmt.Errorf("consumer %s/%s: checkpoints: %w", c.Type, c.Name, err)
	}
	inc, err := adminSelect[adminIncompleteRow](ctx, o.r, o.r.e.DB, dialect.AdminCheckpointIncomplete, arg)
	if err != nil {
		return s, fmt.Errorf("consumer %s/%s: checkpoints: %w", c.Type, c.Name, err)
	}
	incomplete := map[string]*int64{}
	for _, i := range inc {
		incomplete[fmt.Sprint(i.Source, "\x00", i.Partition)] = optInt64(i.Incomplete)
	}
	for _, cp := range cps {
		m, err := o.mark(ctx, cp.Source, marks)
		if err != nil {
			return s, err
		}
		p := PartitionLag{Source: cp.Source, Partition: cp.Partition, Checkpoint: optInt64(cp.Position), Mark: m,
			IncompleteThrough: incomplete[fmt.Sprint(cp.Source, "\x00", cp.Partition)]}
		if m != nil {
			p.Lag = max(0, *m-cp.Position.Int64)
		}
		s.Partitions = append(s.Partitions, p)
	}
	sort.Slice(s.Partitions, func(i, j int) bool {
		a, b := s.Partitions[i], s.Partitions[j]
		return a.Source < b.Source || a.Source == b.Source && a.Partition < b.Partition
	})
	counts, err := adminSelect[adminCountRow](ctx, o.r, o.r.e.DB, dialect.AdminUndeliveredCounts, arg)
	if err != nil {
		return s, fmt.Errorf("consumer %s/%s: undelivered counts: %w", c.Type, c.Name, err)
	}
	for _, n := range counts {
		s.Undelivered[DeliveryStatus(n.Status)] = n.N
	}
	return s, nil
}

// mark reads topic's high-water mark straight from its row (no Source
// needed), once per topic per call.
func (o *Operator) mark(ctx context.Context, topic string, marks map[string]*int64) (*int64, error) {
	if m, ok := marks[topic]; ok {
		return m, nil
	}
	row, err := o.r.e.ReadMarkRow(ctx, o.r.e.DB, topic)
	var m *int64
	switch {
	case err == nil:
		m = &row.Mark
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	marks[topic] = m
	return m, nil
}

func optInt64(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// DeadLetters lists the consumer's dead letters (DEAD_LETTER and
// DEAD_LETTER_KEY rows), without their copies, by source, partition and
// position.
func (o *Operator) DeadLetters(ctx context.Context, ref Ref) ([]UndeliveredRow, error) {
	all, err := o.Undelivered(ctx, ref)
	if err != nil {
		return nil, err
	}
	var out []UndeliveredRow
	for _, u := range all {
		if u.IsDeadLetter() {
			out = append(out, u)
		}
	}
	return out, nil
}

// Undelivered lists every undelivered row of the consumer, without copies.
func (o *Operator) Undelivered(ctx context.Context, ref Ref) ([]UndeliveredRow, error) {
	c, err := o.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	return o.r.undeliveredViews(ctx, o.r.e.DB, c)
}

// undeliveredViews reads consumer c's undelivered rows on q, in source,
// partition and position order.
func (r *Registry) undeliveredViews(ctx context.Context, q engine.Querier, c Consumer) ([]UndeliveredRow, error) {
	rows, err := adminSelect[adminUndeliveredRow](ctx, r, q, dialect.AdminUndeliveredList, map[string]any{"consumer_id": c.ID})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: undelivered rows: %w", c.Ref(), err)
	}
	out := make([]UndeliveredRow, 0, len(rows))
	for _, u := range rows {
		out = append(out, UndeliveredRow{ID: string(u.ID), Source: u.Source, Partition: u.Partition, Key: u.Key, Position: u.Position,
			Status: DeliveryStatus(u.Status), FailureCount: u.Failures, NextRetryAt: time.Time(u.NextRetry),
			FailureReason: u.Reason.String, RecordedAt: time.Time(u.Recorded)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Position < b.Position
	})
	return out, nil
}
