// Command watermill measures watermill-sql v4 on a database the Tidemark
// bench hands it, so `make bench` can put Tidemark's consumer figures next
// to a peer's in the same run. It lives in its own module (bench/peers) so
// the library's go.mod does not gain watermill.
//
// Modes (one JSON line on stdout):
//   - throughput: -publishers goroutines publish -events messages in
//     batches of -batch while one subscriber consumes and acks them;
//     the rate is events / (first publish → last ack); with -write the
//     handler inserts a row per message before acking it.
//   - latency: one publisher publishes one message every 1/-rate for
//     -duration; latency is publish returned (committed) → message received.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// result is what the Tidemark bench reads back.
type result struct {
	Mode   string  `json:"mode"`
	Events int     `json:"events"`
	Rate   float64 `json:"rate,omitempty"` // messages per second
	P50Ms  float64 `json:"p50_ms,omitempty"`
	P99Ms  float64 `json:"p99_ms,omitempty"`
	Error  string  `json:"error,omitempty"`
}

var payload = []byte(`{"amount":125.5,"currency":"EUR","note":"benchmark event payload of a typical size"}`)

func main() {
	driver := flag.String("driver", "pgx", "database/sql driver: pgx (PostgreSQL) or mysql (MySQL, MariaDB)")
	dsn := flag.String("dsn", "", "the database's DSN")
	mode := flag.String("mode", "throughput", "throughput or latency")
	events := flag.Int("events", 50000, "messages (throughput mode)")
	publishers := flag.Int("publishers", 4, "publishing goroutines (throughput mode)")
	batch := flag.Int("batch", 100, "messages per Publish call (throughput mode)")
	poll := flag.Duration("poll", 10*time.Millisecond, "the subscriber's poll interval (0: watermill-sql's default)")
	write := flag.Bool("write", false, "the handler inserts a row per message before its ack (throughput mode)")
	rate := flag.Int("rate", 1000, "messages per second (latency mode)")
	duration := flag.Duration("duration", 5*time.Second, "publishing time (latency mode)")
	flag.Parse()

	res, err := run(context.Background(), *driver, *dsn, *mode, *events, *publishers, *batch, *poll, *rate, *duration, *write)
	if err != nil {
		res.Error = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	if err != nil {
		os.Exit(1)
	}
}

func run(ctx context.Context, driver, dsn, mode string, events, publishers, batch int, poll time.Duration, rate int, duration time.Duration, write bool) (result, error) {
	res := result{Mode: mode}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return res, err
	}
	defer db.Close()
	db.SetMaxOpenConns(32)
	var schema wsql.SchemaAdapter
	var offsets wsql.OffsetsAdapter
	switch driver {
	case "pgx":
		schema, offsets = wsql.DefaultPostgreSQLSchema{}, wsql.DefaultPostgreSQLOffsetsAdapter{}
	case "mysql":
		schema, offsets = wsql.DefaultMySQLSchema{}, wsql.DefaultMySQLOffsetsAdapter{}
	default:
		return res, fmt.Errorf("no watermill-sql adapter for driver %q", driver)
	}
	logger := watermill.NopLogger{}
	beginner := wsql.BeginnerFromStdSQL(db)
	pub, err := wsql.NewPublisher(beginner, wsql.PublisherConfig{SchemaAdapter: schema}, logger)
	if err != nil {
		return res, err
	}
	sub, err := wsql.NewSubscriber(beginner, wsql.SubscriberConfig{
		ConsumerGroup: "bench", PollInterval: poll, SchemaAdapter: schema, OffsetsAdapter: offsets,
		InitializeSchema: true,
	}, logger)
	if err != nil {
		return res, err
	}
	defer sub.Close()
	topic := fmt.Sprintf("bench_%s_%d", mode, time.Now().UnixNano())
	if err := sub.SubscribeInitialize(topic); err != nil {
		return res, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs, err := sub.Subscribe(sctx, topic)
	if err != nil {
		return res, err
	}
	if mode == "latency" {
		return latency(sctx, pub, msgs, topic, rate, duration)
	}
	handle := func(*message.Message) error { return nil }
	if write {
		if handle, err = inserter(ctx, db, driver); err != nil {
			return res, err
		}
	}
	return throughput(sctx, pub, msgs, topic, events, publishers, batch, handle)
}

// inserter creates the table the Tidemark bench's writing handler fills
// (same shape) and returns a handler inserting one row per message, as an
// application's handler would, on its own connection (watermill-sql does
// not hand the handler its ack transaction).
func inserter(ctx context.Context, db *sql.DB, driver string) (func(*message.Message) error, error) {
	if _, err := db.ExecContext(ctx, "CREATE TABLE bench_applied (id VARCHAR(64) PRIMARY KEY, payload VARCHAR(200) NOT NULL)"); err != nil {
		return nil, err
	}
	ins := "INSERT INTO bench_applied (id, payload) VALUES (?, ?)"
	if driver == "pgx" {
		ins = "INSERT INTO bench_applied (id, payload) VALUES ($1, $2)"
	}
	return func(m *message.Message) error {
		_, err := db.ExecContext(ctx, ins, m.UUID, string(m.Payload))
		return err
	}, nil
}

func throughput(ctx context.Context, pub *wsql.Publisher, msgs <-chan *message.Message, topic string, events, publishers, batch int, handle func(*message.Message) error) (result, error) {
	res := result{Mode: "throughput", Events: events}
	var next atomic.Int64
	errs := make(chan error, publishers)
	start := time.Now()
	for range publishers {
		go func() {
			for {
				from := next.Add(int64(batch)) - int64(batch)
				if from >= int64(events) {
					errs <- nil
					return
				}
				n := min(int64(batch), int64(events)-from)
				ms := make([]*message.Message, n)
				for i := range ms {
					ms[i] = message.NewMessage(watermill.NewUUID(), payload)
				}
				if err := pub.Publish(topic, ms...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	got := 0
	deadline := time.After(10 * time.Minute) // a hang guard, not a measurement
	for got < events {
		select {
		case m := <-msgs:
			if err := handle(m); err != nil {
				return res, err
			}
			m.Ack()
			got++
		case err := <-errs:
			if err != nil {
				return res, err
			}
		case <-deadline:
			return res, fmt.Errorf("consumed %d of %d messages in 10 minutes", got, events)
		}
	}
	res.Rate = float64(events) / time.Since(start).Seconds()
	return res, nil
}

func latency(ctx context.Context, pub *wsql.Publisher, msgs <-chan *message.Message, topic string, rate int, duration time.Duration) (result, error) {
	res := result{Mode: "latency"}
	var mu sync.Mutex
	committed := map[string]time.Time{}
	received := map[string]time.Time{}
	done := make(chan error, 1)
	go func() {
		interval := time.Second / time.Duration(rate)
		start := time.Now()
		for i := 0; ; i++ {
			at := start.Add(time.Duration(i) * interval)
			if at.Sub(start) >= duration {
				done <- nil
				return
			}
			time.Sleep(time.Until(at))
			m := message.NewMessage(strconv.Itoa(i), payload)
			if err := pub.Publish(topic, m); err != nil {
				done <- err
				return
			}
			now := time.Now()
			mu.Lock()
			committed[m.UUID] = now
			mu.Unlock()
		}
	}()
	var pubErr error
	pubDone := false
	var drain <-chan time.Time
	for {
		select {
		case m := <-msgs:
			now := time.Now()
			m.Ack()
			mu.Lock()
			received[m.UUID] = now
			mu.Unlock()
			continue
		case pubErr = <-done:
			pubDone = true
			drain = time.After(time.Second) // let the last messages arrive
			continue
		case <-drain:
		}
		if pubDone {
			break
		}
	}
	if pubErr != nil {
		return res, pubErr
	}
	var lat []time.Duration
	for id, c := range committed {
		if r, ok := received[id]; ok {
			lat = append(lat, max(0, r.Sub(c)))
		}
	}
	if len(lat) == 0 {
		return res, fmt.Errorf("no message received")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	res.Events, res.P50Ms, res.P99Ms = len(lat), q(0.5), q(0.99)
	return res, nil
}
