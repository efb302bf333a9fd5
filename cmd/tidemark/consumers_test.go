package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
)

// TestConsumersCommands runs `tidemark consumers …` (the command tree, in
// process, its dialect out of process) on SQLite and PostgreSQL against a
// consumer with lag and dead letters: the table and JSON of list, status
// and dead-letters, then retry, delete, pause, resume, skip and
// unsubscribe, and typed errors as a non-zero exit.
func TestConsumersCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers")
	}
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	for _, eng := range []string{harness.EngineSQLite, harness.EnginePostgres} {
		t.Run(eng, func(t *testing.T) { consumersOn(t, prov, eng) })
	}
}

// cliFixture is a consumer subscribed to the event store with 3 events
// published, one checkpoint at 1, and two dead letters of key "acct/2".
type cliFixture struct {
	args   []string // --dialect, --dsn, --driver
	id     string
	mark   int64
	dlHead string
}

func newCLIFixture(t *testing.T, prov *harness.Provider, eng string) cliFixture {
	ctx := context.Background()
	db := openOrSkip(t, prov, eng)
	args := []string{"--dialect", eng, "--dsn", db.DSN, "--driver", db.DriverName}
	l, err := load(ctx, &pluginFlags{dialect: eng})
	if err != nil {
		t.Fatal(err)
	}
	h, err := sql.Open(db.DriverName, db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	e, err := engine.Open(ctx, h, l.Catalogue, engine.Config{Partitions: 16}) // the CLI's default
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := eventstore.New(e, nil)
	for i := range 3 {
		if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "acct/" + string(rune('1'+i)),
			Events: []eventstore.Event{{Type: "Opened", Payload: []byte(`{}`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	a := hwm.New(e, hwm.Options{})
	var mark int64
	for range 1000 { // a bound against hanging, not a timed assertion
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
		if mark, err = s.Mark(ctx); err != nil || mark >= 3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	reg := consumer.NewRegistry(e, nil)
	c, err := reg.Subscribe(ctx, "projection", "account-summary", consumer.SourceRef{Name: engine.EventStoreTopic, Partitions: e.Partitions})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Advance(ctx, nil, c.ID, engine.EventStoreTopic, 0, 1, 0); err != nil {
		t.Fatal(err)
	}
	f := cliFixture{args: args, id: c.ID, mark: mark}
	for i, st := range []consumer.DeliveryStatus{consumer.StatusDeadLetterKey, consumer.StatusDeadLetterKey} {
		id := uuid.NewString()
		if i == 0 {
			f.dlHead = id
		}
		hash := fnv.New64a()
		hash.Write([]byte("acct/2"))
		_, err := e.ExecText(ctx, e.DB, `INSERT INTO ${consumer_undelivered_messages_table} `+
			`(id, consumer_id, source_name, resolved_key, key_hash, message_position, partition_no, status, failure_count, next_retry_at, failure_reason, recorded_at, unresolved, message_copy) `+
			`VALUES (#{id}, #{c}, #{s}, #{k}, #{h}, #{p}, 3, #{st}, #{n}, NULL, #{r}, #{at}, #{u}, NULL)`, nil,
			map[string]any{"id": id, "c": c.ID, "s": engine.EventStoreTopic, "k": "acct/2", "h": int64(hash.Sum64()), "p": int64(2 + i),
				"st": string(st), "n": 3 * (1 - i), "r": map[bool]any{true: "handler: boom", false: nil}[i == 0],
				"at": time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), "u": false})
		if err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func consumersOn(t *testing.T, prov *harness.Provider, eng string) {
	f := newCLIFixture(t, prov, eng)
	cli := func(args ...string) string {
		t.Helper()
		out, err := run(t, consumersCmd(), append(args, f.args...)...)
		if err != nil {
			t.Fatalf("tidemark consumers %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	consumerReads(t, f, cli)
	consumerWrites(t, f, cli)
}

const cliRef = "projection/account-summary"

// consumerReads checks list, status and dead-letters, as tables and JSON.
func consumerReads(t *testing.T, f cliFixture, cli func(...string) string) {
	const ref = cliRef

	// list: a table with the lag (16 partitions, one at 1) and the counts.
	lag := 16*f.mark - 1
	out := cli("list")
	if !regexp.MustCompile(`(?m)^CONSUMER\s+STATE\s+SINCE\s+SOURCES\s+LAG\s+FAILED\s+WAITING\s+HALTED\s+DEAD_LETTER_KEY\s+DEAD_LETTER$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^projection/account-summary\s+RUNNING\s+\S+\s+1\s+`+i64(lag)+`\s+0\s+0\s+0\s+2\s+0$`).MatchString(out) {
		t.Errorf("list table:\n%s", out)
	}
	var list []consumer.ConsumerStatus
	decodeJSON(t, cli("list", "--json"), &list)
	if len(list) != 1 || list[0].ID != f.id || list[0].Undelivered[consumer.StatusDeadLetterKey] != 2 || len(list[0].Partitions) != 16 {
		t.Fatalf("list --json: %+v", list)
	}

	// status: the partition table with checkpoint, mark and lag.
	out = cli("status", ref)
	if !strings.Contains(out, "undelivered  DEAD_LETTER_KEY 2") ||
		!regexp.MustCompile(`(?m)^event-store\s+0\s+1\s+`+i64(f.mark)+`\s+`+i64(f.mark-1)+`\s+-$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^event-store\s+1\s+-\s+`+i64(f.mark)+`\s+`+i64(f.mark)+`\s+-$`).MatchString(out) {
		t.Errorf("status table:\n%s", out)
	}
	var st consumer.ConsumerStatus
	decodeJSON(t, cli("status", ref, "--json"), &st)
	if st.Partitions[0].Checkpoint == nil || *st.Partitions[0].Checkpoint != 1 || st.Partitions[0].Lag != f.mark-1 || *st.Partitions[1].Mark != f.mark {
		t.Errorf("status --json partitions: %+v", st.Partitions[:2])
	}

	// dead-letters: both rows; the bare command lists too.
	out = cli("dead-letters", ref)
	if !regexp.MustCompile(`(?m)^`+f.dlHead+`\s+event-store\s+3\s+acct/2\s+2\s+DEAD_LETTER_KEY\s+3\s+-\s+2026-03-01T12:00:00Z\s+handler: boom$`).MatchString(out) ||
		cli("dead-letters", "list", ref) != out {
		t.Errorf("dead-letters table:\n%s", out)
	}
	var dls []consumer.UndeliveredView
	decodeJSON(t, cli("dead-letters", "list", ref, "--json"), &dls)
	if len(dls) != 2 || dls[0].ID != f.dlHead || dls[1].Failures != 0 || dls[0].FailureReason != "handler: boom" {
		t.Fatalf("dead-letters --json: %+v", dls)
	}

}

// consumerWrites checks what each operation prints and the typed errors.
func consumerWrites(t *testing.T, f cliFixture, cli func(...string) string) {
	const ref = cliRef
	// retry by key: the head FAILED with a fresh budget, the follower WAITING.
	var changed struct{ Changes consumer.Changes }
	decodeJSON(t, cli("dead-letters", "retry", ref, "--source", engine.EventStoreTopic, "--key", "acct/2", "--json"), &changed)
	if changed.Changes.Released != 1 || changed.Changes.Waiting != 1 {
		t.Errorf("retry --json: %+v", changed)
	}
	if out := cli("dead-letters", ref); strings.TrimSpace(out) != "no dead letters" {
		t.Errorf("dead letters after retry:\n%s", out)
	}
	if out := cli("dead-letters", "delete", ref, "--all"); !strings.Contains(out, "delete dead letters "+ref+": nothing changed") {
		t.Errorf("delete --all with none left: %s", out)
	}

	// pause, resume, skip, unsubscribe print what they changed.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pause", ref}, "pause " + ref + ": state PAUSED"},
		{[]string{"resume", ref}, "resume " + ref + ": state RUNNING"},
		{[]string{"skip", ref, "--source", engine.EventStoreTopic, "--partition", "3", "--position", "2", "--key", "acct/2"}, "skip " + ref + ": 1 skips recorded"},
		{[]string{"unsubscribe", ref, "--source", engine.EventStoreTopic}, "unsubscribe " + ref + " from event-store: 2 undelivered deleted, 1 skips deleted, 16 checkpoints deleted, consumer row deleted"},
	} {
		if out := cli(c.args...); !strings.Contains(out, c.want) {
			t.Errorf("%s: %q, want %q", strings.Join(c.args, " "), out, c.want)
		}
	}
	if out := cli("list"); strings.TrimSpace(out) != "no consumers" {
		t.Errorf("list after unsubscribe:\n%s", out)
	}

	// Typed errors end the command with an error naming the cause.
	for _, c := range []struct {
		args   []string
		target error
		want   string
	}{
		{[]string{"status", ref}, consumer.ErrNotFound, "consumer not found"},
		{[]string{"pause", "no-slash"}, consumer.ErrInvalidName, "want <type>/<name>"},
		{[]string{"dead-letters", "retry", ref, "--id", "x", "--all"}, consumer.ErrInvalidSelector, "exactly one of"},
		{[]string{"resume", ref, "--past-poison"}, consumer.ErrNotFound, "consumer not found"},
	} {
		out, err := run(t, consumersCmd(), append(c.args, f.args...)...)
		if !errors.Is(err, c.target) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (%s), want %v naming %q", strings.Join(c.args, " "), err, out, c.target, c.want)
		}
	}
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func decodeJSON(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, out)
	}
}
