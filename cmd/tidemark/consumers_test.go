package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
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
	"github.com/tidemarkdb/tidemark/core/lease"
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
	e      *engine.Engine
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
	f := cliFixture{args: args, e: e, id: c.ID, mark: mark}
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
	consumerLeases(t, f, cli)
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
	var dls []consumer.UndeliveredRow
	decodeJSON(t, cli("dead-letters", "list", ref, "--json"), &dls)
	if len(dls) != 2 || dls[0].ID != f.dlHead || dls[1].FailureCount != 0 || dls[0].FailureReason != "handler: boom" {
		t.Fatalf("dead-letters --json: %+v", dls)
	}

}

// consumerLeases checks the ownership table and JSON of status: not leased
// without lease rows; then one live instance holding half the partitions at
// generation 1 and the other half free (a second instance stopped).
func consumerLeases(t *testing.T, f cliFixture, cli func(...string) string) {
	ctx := context.Background()
	if out := cli("status", cliRef); !regexp.MustCompile(`(?m)^ownership: not leased$`).MatchString(out) {
		t.Errorf("status without lease rows:\n%s", out)
	}
	var st consumer.ConsumerStatus
	decodeJSON(t, cli("status", cliRef, "--json"), &st)
	if st.Leases == nil || st.Leases.Leased {
		t.Errorf("status --json without lease rows: leases %+v, want leased false", st.Leases)
	}
	ref := consumer.Ref{Type: "projection", Name: "account-summary"}
	var cos [2]*lease.Coordinator
	var members [2]*lease.Member
	for i := range cos {
		// A lease of a minute: nothing heartbeats while the CLI runs, and each
		// command starts its plugin and engine (seconds on a loaded machine).
		co, err := lease.New(f.e, lease.Options{HostName: "cli-host-" + strconv.Itoa(i), LeaseDuration: time.Minute,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = co.Stop(context.Background()) })
		if members[i], err = co.Join(ctx, lease.ConsumerOptions{Type: ref.Type, Name: ref.Name, Partitions: 16}); err != nil {
			t.Fatal(err)
		}
		cos[i] = co
	}
	for _, co := range cos {
		if err := co.Rebalance(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := cos[1].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	owned := members[0].Owned()
	var held, free []string
	for p := range 16 {
		if g, ok := owned[p]; ok {
			held = append(held, fmt.Sprintf("%d@%d", p, g))
		} else {
			free = append(free, fmt.Sprintf("%d@1", p))
		}
	}
	out := cli("status", cliRef)
	if len(held) != 8 ||
		!regexp.MustCompile(`(?m)^INSTANCE\s+HOST\s+STATE\s+MEMBER\s+LAST_HEARTBEAT\s+EXPIRES_AT\s+PARTITIONS@GENERATION$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+cos[0].InstanceID()+`\s+cli-host-0\s+live\s+yes\s+\S+Z\s+\S+Z\s+`+strings.Join(held, " ")+`$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\(free\)\s+-\s+-\s+-\s+-\s+-\s+`+strings.Join(free, " ")+`$`).MatchString(out) {
		t.Errorf("ownership table (instance %s holds %v):\n%s", cos[0].InstanceID(), held, out)
	}
	decodeJSON(t, cli("status", cliRef, "--json"), &st)
	if v := st.Leases; v == nil || !v.Leased || len(v.Instances) != 1 || v.Instances[0].ID != cos[0].InstanceID() ||
		v.Instances[0].State != consumer.InstanceLive || len(v.Instances[0].Partitions) != 8 || len(v.Free) != 8 || v.Instances[0].LastHeartbeat == nil {
		t.Errorf("status --json leases: %+v", st.Leases)
	}
	if err := cos[0].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lease.DeleteConsumer(ctx, f.e, f.e.DB, ref.Type, ref.Name); err != nil {
		t.Fatal(err)
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

	// skip names an existing message: its partition and key as the event
	// store holds them.
	evs, err := eventstore.New(f.e, nil).ReadAll(context.Background(), 1, 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("reading position 2: %v %v", evs, err)
	}
	part, key := strconv.Itoa(evs[0].PartitionKey), evs[0].AggregateType+"/"+evs[0].AggregateID
	skip := []string{"skip", ref, "--source", engine.EventStoreTopic, "--partition", part, "--position", "2"}
	cliSkipRefusals(t, f, skip, key)

	// pause, resume, skip, unsubscribe print what they changed; a refusal
	// names the consumer as the operator typed it and the source as given.
	for _, c := range []struct {
		args   []string
		want   string
		target error // the refusal expected instead of output
	}{
		{[]string{"pause", ref}, "pause " + ref + ": state PAUSED", nil},
		{[]string{"pause", ref}, "consumer " + ref + ": cannot go from PAUSED to PAUSED", consumer.ErrTransition},
		{[]string{"resume", ref}, "resume " + ref + ": state RUNNING", nil},
		{append(skip, "--key", key), "skip " + ref + ": 1 skips recorded", nil},
		{[]string{"skip", ref, "--source", engine.EventStoreTopic, "--partition", "0", "--position", i64(f.mark + 5), "--every-key", "--ahead"}, "skip " + ref + ": 1 skips recorded", nil},
		{[]string{"unsubscribe", ref, "--source", "no%sthing%d"}, "consumer " + ref + " is not subscribed to no%sthing%d", consumer.ErrNotSubscribed},
		{[]string{"unsubscribe", ref, "--source", engine.EventStoreTopic}, "unsubscribe " + ref + " from event-store: 2 undelivered deleted, 2 skips deleted, 16 checkpoints deleted, consumer row deleted", nil},
	} {
		if c.target != nil {
			out, err := run(t, consumersCmd(), append(c.args, f.args...)...)
			if !errors.Is(err, c.target) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v (%s), want %v naming %q", strings.Join(c.args, " "), err, out, c.target, c.want)
			}
			continue
		}
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

// cliSkipRefusals checks that skip refuses what does not identify an
// existing message, before recording anything: no partition, no key, a
// position without a message, another key, a position past the mark
// without --ahead. skip is the command up to the key; key the message's.
func cliSkipRefusals(t *testing.T, f cliFixture, skip []string, key string) {
	t.Helper()
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(skip); i++ {
			if skip[i] == flag {
				i++
				continue
			}
			out = append(out, skip[i])
		}
		return out
	}
	for _, c := range []struct {
		args   []string
		target error // nil: a usage error naming want
		want   string
	}{
		{append(without("--partition"), "--key", key), nil, `"partition" not set`},
		{skip, nil, "[key every-key] is required"},
		{append(without("--position"), "--position", "999999", "--key", key), consumer.ErrNoSuchMessage, "past the source's mark"},
		{append(skip, "--key", "bank.Account/other"), consumer.ErrNoSuchMessage, `the message's key is "` + key + `"`},
		{append(skip, "--key", ""), consumer.ErrNoSuchMessage, `the message's key is "` + key + `"`},
		{append(without("--partition"), "--partition", "16", "--every-key"), consumer.ErrInvalidSkip, "partitions 0..15"},
		{append(without("--source"), "--source", "topic-x", "--every-key"), consumer.ErrInvalidSkip, `source "topic-x"`},
	} {
		out, err := run(t, consumersCmd(), append(c.args, f.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.target != nil && !errors.Is(err, c.target)) {
			t.Errorf("%s: %v (%s), want an error naming %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	// A position below the mark in another partition holds no message there.
	other := "0"
	if skip[5] == "0" {
		other = "1"
	}
	args := append(without("--partition"), "--partition", other, "--every-key")
	if out, err := run(t, consumersCmd(), append(args, f.args...)...); !errors.Is(err, consumer.ErrNoSuchMessage) || !strings.Contains(err.Error(), "holds no message there") {
		t.Errorf("%s: %v (%s), want no such message", strings.Join(args, " "), err, out)
	}
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func decodeJSON(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, out)
	}
}
