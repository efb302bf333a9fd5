package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/plugins/postgres/pgwake"
)

func init() {
	RegisterWorkerAction("wake-publish", runWakePublisher)
}

// wakePublished is what the "wake-publish" worker wrote.
type wakePublished struct {
	Event   int64 `json:"event"`
	Capture int64 `json:"capture"`
}

// runWakePublisher appends one event and publishes one capture message,
// then moves both marks with advancers of its own: their cycles notify
// (hwm.notify) from this process.
func runWakePublisher(ctx context.Context, db *sql.DB, job WorkerJob) (any, error) {
	e, err := engine.Open(ctx, db, job.Catalogue, job.Config)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	s := eventstore.New(e, nil)
	res, err := s.Append(ctx, eventstore.Stream{AggregateType: "test.Account", AggregateID: "wake-1", Events: []eventstore.Event{ev("test.E", `{}`)}})
	if err != nil {
		return nil, err
	}
	if _, err := advanceUntil(ctx, hwm.New(e, hwm.Options{}), s, res.Positions[0]); err != nil {
		return nil, err
	}
	tp, err := topic.New(ctx, e)
	if err != nil {
		return nil, err
	}
	pos, err := tp.Publish(ctx, topic.Message{Key: "wake-1", Type: "test.Captured", Payload: []byte(`{}`)})
	if err != nil {
		return nil, err
	}
	adv := tp.Advancer(hwm.Options{})
	deadline := testtime.Deadline(30 * time.Second) // a hang guard
	for {
		if _, err := adv.Cycle(ctx); err != nil {
			return nil, err
		}
		if m, err := tp.Mark(ctx); err != nil || m >= pos[0] {
			return wakePublished{Event: res.Positions[0], Capture: pos[0]}, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("capture mark stuck below %d", pos[0])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// declaresNotify: the catalogue names a statement that tells other
// processes a mark moved (hwm.notify). The listening side the project
// ships for it is pgwake (PostgreSQL's LISTEN on pgwake.Channel).
func declaresNotify(cat dialect.Catalogue) bool {
	return strings.TrimSpace(cat.Statements[dialect.HWMNotify]) != ""
}

// firstPollSource signals once its first Mark read has returned: the
// runner's first poll read the mark, so anything published afterwards is
// above it and only a later poll, which only a wake-up can start before the
// poll interval ends, can deliver it.
type firstPollSource[T any] struct {
	consumer.SourceOf[T]
	once   sync.Once
	polled chan struct{}
}

func (s *firstPollSource[T]) Mark(ctx context.Context) (int64, error) {
	m, err := s.SourceOf.Mark(ctx)
	s.once.Do(func() { close(s.polled) })
	return m, err
}

// testConsumerWokenAcrossProcesses: two runners, one over the event store
// and one over the capture topic, each with a poll interval of an hour and
// a pgwake waker for its own topic; another OS process appends, publishes
// and moves both marks. Only the notifications can deliver.
func testConsumerWokenAcrossProcesses(t T, env *Env) {
	if !declaresNotify(env.Catalogue) {
		skipf(t, "the catalogue declares no %s statement: other processes are not told a mark moved, consumers there poll", dialect.HWMNotify)
	}
	tp, _, e := openCapture(t, env)
	s := eventstore.New(e, nil)
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	listenErr := make(chan error, 1)
	onErr := pgwake.OnError(func(err error) {
		select {
		case listenErr <- err:
		default:
		}
	})
	wEvents := pgwake.Listen(ctx, env.DSN, engine.EventStoreTopic, onErr)
	wCapture := pgwake.Listen(ctx, env.DSN, topic.CaptureTopic, onErr)
	for _, w := range []*pgwake.Waker{wEvents, wCapture} {
		select {
		case <-w.Ready():
		case err := <-listenErr:
			t.Fatalf("LISTEN failed: %v", err)
		case <-ctx.Done():
			t.Fatal("LISTEN never became ready")
		}
	}
	log := newAppliedLog()
	reg := consumer.NewRegistry(e, nil)
	events := &firstPollSource[eventstore.Recorded]{SourceOf: consumer.EventStore(s, wEvents), polled: make(chan struct{})}
	records := &firstPollSource[topic.Record]{SourceOf: consumer.Capture(tp, wCapture), polled: make(chan struct{})}
	sources := []struct {
		route  consumer.Route
		polled chan struct{}
	}{{consumer.On(events, log.events), events.polled}, {consumer.On(records, log.records), records.polled}}
	var done []chan error
	for i, src := range sources {
		r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: "projection", Name: fmt.Sprintf("woken-%d", i),
			PollInterval: time.Hour, Routes: []consumer.Route{src.route}})
		if err != nil {
			t.Fatal(err)
		}
		ch := make(chan error, 1)
		go func() { ch <- r.Run(ctx) }()
		done = append(done, ch)
		select {
		case <-src.polled:
		case <-ctx.Done():
			t.Fatal("the runner never polled")
		}
	}
	job := WorkerJob{Action: "wake-publish", Catalogue: env.Catalogue, Driver: env.Driver, DSN: env.DSN, Config: defaultConfig(env)}
	res := runWorkers(t, []WorkerJob{job})
	if !res[0].OK {
		t.Fatalf("publishing process: %s %s", res[0].ErrorKind, res[0].Error)
	}
	var pub wakePublished
	if err := json.Unmarshal(res[0].Data, &pub); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both runners woken by the other process's notifications (their poll interval is an hour)", func() bool {
		return log.count(engine.EventStoreTopic) == 1 && log.count(topic.CaptureTopic) == 1
	})
	log.mu.Lock()
	if log.times[engine.EventStoreTopic][pub.Event] != 1 || log.times[topic.CaptureTopic][pub.Capture] != 1 {
		t.Errorf("applied %v, want event %d and capture message %d once each", log.times, pub.Event, pub.Capture)
	}
	log.mu.Unlock()
	cancel()
	for _, ch := range done {
		<-ch
	}
}
