package console

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// knownTopics are always shown when their mark row exists; consumers'
// sources add to them.
var knownTopics = []string{engine.EventStoreTopic, topic.CaptureTopic}

// positionObjects are the position objects of the topics whose committed
// end the console can read.
var positionObjects = map[string]engine.PositionObject{
	engine.EventStoreTopic: engine.EventStorePositions,
	topic.CaptureTopic:     engine.CapturePositions,
}

// topicView is one topic's mark row.
type topicView struct {
	Name string
	Mark int64
	// End is the committed end: the highest position handed out (nil for a
	// topic whose position object the console does not know).
	End        *int64
	PendingEnd *int64
	// Rate is the mark's advance per second since the previous look.
	Rate *float64
}

// holderView is the oldest transaction in flight (PostgreSQL's
// xid.oldest_holder): what holds every mark back.
type holderView struct {
	XID      int64
	Database string
	Since    *time.Time
}

// instanceView is one instance across the consumers whose leases it holds
// or whose member it is.
type instanceView struct {
	consumer.LeaseInstance
	Consumers []string
}

type overviewData struct {
	Topics    []topicView
	Holder    *holderView
	HolderOK  bool // the dialect has xid.oldest_holder
	Instances []instanceView
	States    map[consumer.State]int
	Consumers int
}

func (s *Server) overview(r *http.Request) (any, error) {
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	list, err := s.op.List(ctx)
	if err != nil {
		return nil, err
	}
	d := overviewData{States: map[consumer.State]int{}, Consumers: len(list)}
	for _, c := range list {
		d.States[c.State]++
	}
	if d.Topics, err = s.topics(ctx, list); err != nil {
		return nil, err
	}
	e := s.op.Engine()
	if e.Has(dialect.OldestHolderXID) {
		d.HolderOK = true
		if d.Holder, err = oldestHolder(ctx, e); err != nil {
			return nil, err
		}
	}
	statuses, err := s.statuses(ctx, list)
	if err != nil {
		return nil, err
	}
	d.Instances = instances(statuses)
	return d, nil
}

// topics reads the mark row of every known topic and consumer source.
func (s *Server) topics(ctx context.Context, list []consumer.ConsumerStatus) ([]topicView, error) {
	names := map[string]bool{}
	for _, t := range knownTopics {
		names[t] = true
	}
	for _, c := range list {
		for _, p := range c.Partitions {
			names[p.Source] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	e := s.op.Engine()
	var out []topicView
	for _, n := range sorted {
		row, err := e.ReadMarkRow(ctx, e.DB, n)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		t := topicView{Name: n, Mark: row.Mark, Rate: s.rate("mark\x00"+n, float64(row.Mark))}
		if row.PendingEnd.Valid {
			v := row.PendingEnd.Int64
			t.PendingEnd = &v
		}
		if obj, ok := positionObjects[n]; ok && e.Names.Shared[obj.Placeholder] != "" {
			end, err := e.Positions.CommittedEnd(ctx, e.DB, e.Names.Shared[obj.Placeholder])
			if err != nil {
				return nil, err
			}
			end = max(end, row.Mark)
			t.End = &end
		}
		s.seeMark(n, row.Mark, t.PendingEnd)
		out = append(out, t)
	}
	return out, nil
}

// oldestHolder runs xid.oldest_holder: nil when no transaction is in
// flight.
func oldestHolder(ctx context.Context, e *engine.Engine) (*holderView, error) {
	var xid sql.NullInt64
	var db sql.NullString
	var since sql.NullTime
	err := e.QueryRow(ctx, e.DB, dialect.OldestHolderXID, nil, nil).Scan(&xid, &db, &since)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !xid.Valid {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oldest transaction: %w", err)
	}
	h := &holderView{XID: xid.Int64, Database: db.String}
	if since.Valid {
		t := since.Time
		h.Since = &t
	}
	return h, nil
}

// statuses reads every listed consumer's status with its leases.
func (s *Server) statuses(ctx context.Context, list []consumer.ConsumerStatus) ([]consumer.ConsumerStatus, error) {
	out := make([]consumer.ConsumerStatus, 0, len(list))
	for _, c := range list {
		st, err := s.op.Status(ctx, c.Ref())
		if errors.Is(err, consumer.ErrNotFound) {
			continue // gone since the list
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// instances gathers the instances of every consumer's lease view.
func instances(statuses []consumer.ConsumerStatus) []instanceView {
	byID := map[string]*instanceView{}
	var ids []string
	for _, st := range statuses {
		if st.Leases == nil {
			continue
		}
		for _, in := range st.Leases.Instances {
			v, ok := byID[in.ID]
			if !ok {
				v = &instanceView{LeaseInstance: in}
				v.Partitions = nil
				byID[in.ID] = v
				ids = append(ids, in.ID)
			}
			v.Consumers = append(v.Consumers, st.Ref().String())
		}
	}
	sort.Strings(ids)
	out := make([]instanceView, 0, len(ids))
	for _, id := range ids {
		out = append(out, *byID[id])
	}
	return out
}

// partitionView is one checkpoint with the scale of its lag bar.
type partitionView struct {
	consumer.PartitionLag
	Max int64 // the largest lag of the consumer, at least 1
}

type consumerView struct {
	consumer.ConsumerStatus
	Lag int64
	// Progress is the advance per second of the consumer's furthest
	// checkpoint per source, summed: positions passed, not messages
	// applied (the database does not count applies).
	Progress   *float64
	Dead       int64
	Rows       []partitionView
	Statuses   []statusCount
	Actionable bool
}

type statusCount struct {
	Status consumer.DeliveryStatus
	N      int64
}

// undeliveredOrder is the order of the counts: live statuses first.
var undeliveredOrder = []consumer.DeliveryStatus{consumer.StatusFailed, consumer.StatusWaiting, consumer.StatusHalted,
	consumer.StatusDeadLetterKey, consumer.StatusDeadLetter}

func (s *Server) consumers(r *http.Request) (any, error) {
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	list, err := s.op.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]consumerView, 0, len(list))
	for _, c := range list {
		v := consumerView{ConsumerStatus: c}
		furthest := map[string]int64{}
		maxLag := int64(1)
		for _, p := range c.Partitions {
			v.Lag += p.Lag
			maxLag = max(maxLag, p.Lag)
			if p.Checkpoint != nil {
				furthest[p.Source] = max(furthest[p.Source], *p.Checkpoint)
			}
		}
		for _, p := range c.Partitions {
			v.Rows = append(v.Rows, partitionView{PartitionLag: p, Max: maxLag})
		}
		var passed int64
		for _, cp := range furthest {
			passed += cp
		}
		v.Progress = s.rate("progress\x00"+c.ID, float64(passed))
		for _, st := range undeliveredOrder {
			if n := c.Undelivered[st]; n > 0 {
				v.Statuses = append(v.Statuses, statusCount{st, n})
			}
		}
		v.Dead = c.Undelivered[consumer.StatusDeadLetter] + c.Undelivered[consumer.StatusDeadLetterKey]
		out = append(out, v)
	}
	return out, nil
}

type leasesData struct {
	Consumers []consumer.ConsumerStatus
}

func (s *Server) leases(r *http.Request) (any, error) {
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	list, err := s.op.List(ctx)
	if err != nil {
		return nil, err
	}
	st, err := s.statuses(ctx, list)
	return leasesData{Consumers: st}, err
}
