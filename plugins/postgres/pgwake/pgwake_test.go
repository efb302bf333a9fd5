package pgwake_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/internal/testtime"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
	"github.com/tidemarkdb/tidemark/plugins/postgres/pgwake"
)

// TestFollowerInAnotherProcessIsWoken: the follower has no local advancer
// and a poll interval of an hour; only the notification can wake it.
func TestFollowerWokenByNotification(t *testing.T) {
	ctx, cancel := testtime.Context(context.Background(), time.Minute)
	defer cancel()
	prov := harness.NewProvider()
	defer prov.Close()
	d, err := prov.Open(ctx, harness.EnginePostgres, "pgx")
	var sk *harness.Skipped
	if errors.As(err, &sk) {
		t.Skipf("no PostgreSQL: %s", sk.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := plugin.InProcess(ctx, postgres.New())
	if err != nil {
		t.Fatal(err)
	}
	open := func() *eventstore.Store {
		db, err := sql.Open("pgx", d.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e, err := engine.Open(ctx, db, loaded.Catalogue, engine.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return eventstore.New(e, nil)
	}
	writer, reader := open(), open()
	w := pgwake.Listen(ctx, d.DSN, engine.EventStoreTopic)
	select {
	case <-w.Ready():
	case <-ctx.Done():
		t.Fatal("LISTEN never became ready")
	}
	got := make(chan eventstore.Recorded, 1)
	go reader.Follow(ctx, 0, eventstore.FollowOptions{Waker: w, PollInterval: time.Hour}, func(r eventstore.Recorded) error {
		got <- r
		return nil
	})
	woken := w.Changed() // taken before anything moves
	res, err := writer.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "n-1", Events: []eventstore.Event{{Type: "E", Payload: []byte(`{}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	adv := hwm.New(writer.Engine(), hwm.Options{})
	for {
		moved, err := adv.Cycle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !moved {
			break
		}
	}
	select {
	case <-woken:
	case <-ctx.Done():
		t.Fatal("no notification after the mark moved")
	}
	select {
	case r := <-got:
		if r.GlobalPosition != res.Positions[0] {
			t.Fatalf("follower got position %d, want %d", r.GlobalPosition, res.Positions[0])
		}
	case <-ctx.Done():
		t.Fatal("follower was never woken by the notification (its poll interval is an hour)")
	}
}

// TestListenOnStandbyRefused: on a hot standby LISTEN is refused; the
// Waker gives up at once and says why instead of retrying silently.
func TestListenOnStandbyRefused(t *testing.T) {
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	prov := harness.NewProvider()
	defer prov.Close()
	rs, err := prov.PostgresReplicas(ctx)
	var sk *harness.Skipped
	if errors.As(err, &sk) {
		t.Skipf("no PostgreSQL replicas: %s", sk.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, replicas, err := rs.Database(ctx, "pgx")
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	w := pgwake.Listen(ctx, replicas[0].DSN, engine.EventStoreTopic, pgwake.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	select {
	case <-w.Done():
	case <-w.Ready():
		t.Fatal("LISTEN on a hot standby reported ready")
	case <-ctx.Done():
		t.Fatalf("the Waker on a standby never gave up (last error: %v)", w.Err())
	}
	if !errors.Is(w.Err(), pgwake.ErrListenRefused) {
		t.Fatalf("Err after giving up: want ErrListenRefused, got %v", w.Err())
	}
	t.Logf("refused: %v", w.Err())
	if out := logged.String(); strings.Contains(out, "; retrying") || !strings.Contains(out, "not retrying") {
		t.Errorf("the warning on giving up must say it does not retry:\n%s", out)
	}
}
