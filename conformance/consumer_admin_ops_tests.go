package conformance

import (
	"context"
	"errors"
	"strings"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// adminDeadLetters is the dead-letter fixture: key "a" died as DEAD_LETTER_KEY
// at 21 with two later messages held dead behind it; key "b" has two
// DEAD_LETTER rows (21 is another partition's position space on a topic);
// key "c" one DEAD_LETTER on the second topic; key "d" a FAILED row no
// selector may touch.
type adminDeadLetters struct {
	aHead, aFollow1, aFollow2, b1, b2, c, d string
}

func (f *adminFixture) adminDeadLetters(t T) adminDeadLetters {
	t.Helper()
	es := engine.EventStoreTopic
	return adminDeadLetters{
		aHead:    f.insert(t, adminRow{source: es, partition: 2, key: "a", pos: 21, status: consumer.StatusDeadLetterKey, failures: 3, reason: "bad a"}),
		aFollow1: f.insert(t, adminRow{source: es, partition: 2, key: "a", pos: 23, status: consumer.StatusDeadLetterKey}),
		aFollow2: f.insert(t, adminRow{source: es, partition: 2, key: "a", pos: 25, status: consumer.StatusDeadLetterKey}),
		b1:       f.insert(t, adminRow{source: es, partition: 4, key: "b", pos: 22, status: consumer.StatusDeadLetter, failures: 2, reason: "bad b"}),
		b2:       f.insert(t, adminRow{source: es, partition: 4, key: "b", pos: 26, status: consumer.StatusDeadLetter, failures: 4, reason: "bad b"}),
		c:        f.insert(t, adminRow{source: adminTopic, partition: 1, key: "c", pos: 21, status: consumer.StatusDeadLetter, failures: 1}),
		d:        f.insert(t, adminRow{source: es, partition: 2, key: "d", pos: 24, status: consumer.StatusFailed, failures: 1}),
	}
}

func testAdminRetry(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	dl := f.adminDeadLetters(t)
	es := engine.EventStoreTopic

	// One row: that row alone.
	ch := adminMust(t, "retry b1")(f.op.RetryDeadLetters(ctx, f.ref, consumer.ByID(dl.b1)))
	if ch.Released != 1 || ch.Waiting != 0 {
		t.Errorf("retry one changed %+v", ch)
	}
	rows := f.rows(t)
	adminExpectRow(t, rows, dl.b1, consumer.StatusFailed, 0)
	adminExpectRow(t, rows, dl.b2, consumer.StatusDeadLetter, 4)
	adminExpectRow(t, rows, dl.aHead, consumer.StatusDeadLetterKey, 3)

	// By key: the DEAD_LETTER_KEY head gets a fresh budget, the key's
	// messages held behind it go back in line.
	ch = adminMust(t, "retry key a")(f.op.RetryDeadLetters(ctx, f.ref, consumer.ByKey(es, "a")))
	if ch.Released != 1 || ch.Waiting != 2 {
		t.Errorf("retry by key changed %+v, want 1 released, 2 waiting", ch)
	}
	rows = f.rows(t)
	adminExpectRow(t, rows, dl.aHead, consumer.StatusFailed, 0)
	adminExpectRow(t, rows, dl.aFollow1, consumer.StatusWaiting, 0)
	adminExpectRow(t, rows, dl.aFollow2, consumer.StatusWaiting, 0)
	adminExpectRow(t, rows, dl.b2, consumer.StatusDeadLetter, 4)

	// A selector of one row or key matching no dead letter is refused.
	_, err := f.op.RetryDeadLetters(ctx, f.ref, consumer.ByKey(es, "a"))
	expectErr[*consumer.NoDeadLetterError](t, err, "retrying key a again")
	_, err = f.op.RetryDeadLetters(ctx, f.ref, consumer.ByID(dl.d))
	expectErr[*consumer.NoDeadLetterError](t, err, "retrying a FAILED row as a dead letter")

	// All: every dead letter left, on every source; FAILED rows untouched.
	ch = adminMust(t, "retry all")(f.op.RetryDeadLetters(ctx, f.ref, consumer.AllDeadLetters()))
	if ch.Released != 2 || ch.Waiting != 0 {
		t.Errorf("retry all changed %+v, want 2 released", ch)
	}
	rows = f.rows(t)
	adminExpectRow(t, rows, dl.b2, consumer.StatusFailed, 0)
	adminExpectRow(t, rows, dl.c, consumer.StatusFailed, 0)
	adminExpectRow(t, rows, dl.d, consumer.StatusFailed, 1)
	f.expectSkips(t, es)
	ch = adminMust(t, "retry all again")(f.op.RetryDeadLetters(ctx, f.ref, consumer.AllDeadLetters()))
	if ch != (consumer.Changes{}) {
		t.Errorf("retrying all with no dead letter changed %+v", ch)
	}
}

func testAdminDelete(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	dl := f.adminDeadLetters(t)
	es := engine.EventStoreTopic

	// One row, the DEAD_LETTER_KEY head: deleted and skipped; its key's
	// held messages go back in line (the first becomes the head).
	ch := adminMust(t, "delete a's head")(f.op.DeleteDeadLetters(ctx, f.ref, consumer.ByID(dl.aHead)))
	if ch.Deleted != 1 || ch.Skips != 1 || ch.Waiting != 2 || ch.Released != 0 {
		t.Errorf("delete one changed %+v, want 1 deleted, 1 skip, 2 waiting", ch)
	}
	rows := f.rows(t)
	adminExpectGone(t, rows, dl.aHead)
	adminExpectRow(t, rows, dl.aFollow1, consumer.StatusWaiting, 0)
	adminExpectRow(t, rows, dl.aFollow2, consumer.StatusWaiting, 0)
	f.expectSkips(t, es, consumer.Skip{Source: es, Partition: 2, Position: 21, Key: "a"})

	// By key: every dead letter of the key, each skipped.
	ch = adminMust(t, "delete key b")(f.op.DeleteDeadLetters(ctx, f.ref, consumer.ByKey(es, "b")))
	if ch.Deleted != 2 || ch.Skips != 2 {
		t.Errorf("delete by key changed %+v, want 2 deleted and skipped", ch)
	}
	rows = f.rows(t)
	adminExpectGone(t, rows, dl.b1, dl.b2)
	adminExpectRow(t, rows, dl.c, consumer.StatusDeadLetter, 1)
	f.expectSkips(t, es, consumer.Skip{Source: es, Partition: 2, Position: 21, Key: "a"},
		consumer.Skip{Source: es, Partition: 4, Position: 22, Key: "b"}, consumer.Skip{Source: es, Partition: 4, Position: 26, Key: "b"})
	_, err := f.op.DeleteDeadLetters(ctx, f.ref, consumer.ByKey(es, "b"))
	expectErr[*consumer.NoDeadLetterError](t, err, "deleting key b again")

	// A follower alone: its head still holds the others.
	e1 := f.insert(t, adminRow{source: es, partition: 5, key: "e", pos: 31, status: consumer.StatusDeadLetterKey, failures: 2})
	e2 := f.insert(t, adminRow{source: es, partition: 5, key: "e", pos: 32, status: consumer.StatusDeadLetterKey})
	e3 := f.insert(t, adminRow{source: es, partition: 5, key: "e", pos: 33, status: consumer.StatusDeadLetterKey})
	ch = adminMust(t, "delete a follower")(f.op.DeleteDeadLetters(ctx, f.ref, consumer.ByID(e2)))
	if ch.Deleted != 1 || ch.Waiting != 0 {
		t.Errorf("deleting a follower changed %+v, want 1 deleted, none waiting", ch)
	}
	rows = f.rows(t)
	adminExpectRow(t, rows, e1, consumer.StatusDeadLetterKey, 2)
	adminExpectRow(t, rows, e3, consumer.StatusDeadLetterKey, 0)

	// All: every dead letter on every source; WAITING and FAILED rows stay.
	ch = adminMust(t, "delete all")(f.op.DeleteDeadLetters(ctx, f.ref, consumer.AllDeadLetters()))
	if ch.Deleted != 3 || ch.Skips != 3 {
		t.Errorf("delete all changed %+v, want 3 deleted and skipped", ch)
	}
	rows = f.rows(t)
	adminExpectGone(t, rows, dl.c, e1, e3)
	adminExpectRow(t, rows, dl.aFollow1, consumer.StatusWaiting, 0)
	adminExpectRow(t, rows, dl.d, consumer.StatusFailed, 1)
	if len(rows) != 3 {
		t.Errorf("%d rows left, want a's two WAITING and d's FAILED", len(rows))
	}
	f.expectSkips(t, adminTopic, consumer.Skip{Source: adminTopic, Partition: 1, Position: 21, Key: "c"})
}

func testAdminSkip(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	es := engine.EventStoreTopic
	s := consumer.Skip{Source: es, Partition: 3, Position: 42, Key: "acct/7"}
	for range 2 { // a skip recorded twice is one row
		if ch := adminMust(t, "skip")(f.op.Skip(ctx, f.ref, s)); ch.Skips != 1 {
			t.Errorf("skip changed %+v", ch)
		}
	}
	every := consumer.Skip{Source: adminTopic, Partition: 1, Position: 5, EveryKey: true}
	adminMust(t, "skip every key")(f.op.Skip(ctx, f.ref, every))
	f.expectSkips(t, es, s)
	f.expectSkips(t, adminTopic, every)
	_, err := f.op.Skip(ctx, f.ref, consumer.Skip{Source: adminTopic, Partition: 2, Position: 5})
	if ns := expectErr[*consumer.NotSubscribedError](t, err, "skip on a partition without a checkpoint"); ns.Partition != 2 {
		t.Errorf("not subscribed: %+v", ns)
	}
	_, err = f.op.Skip(ctx, f.ref, consumer.Skip{Source: "no-such-topic", Partition: 0, Position: 5})
	expectErr[*consumer.NotSubscribedError](t, err, "skip on a source the consumer does not read")
}

// adminCountRows counts the rows of table (a spec name) referencing consumer id.
func adminCountRows(t T, e *engine.Engine, table, id string) int {
	t.Helper()
	name, col := e.Names.Shared[table], "consumer_id"
	if table == "consumers_table" {
		col = "id"
	}
	var n int
	if err := e.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+name+` WHERE `+col+` = '`+id+`'`).Scan(&n); err != nil {
		t.Fatalf("counting %s: %v", name, err)
	}
	return n
}

func testAdminUnsubscribe(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	es := engine.EventStoreTopic
	f.adminDeadLetters(t) // 6 rows on the event store, 1 on the topic
	adminMust(t, "skip")(f.op.Skip(ctx, f.ref, consumer.Skip{Source: es, Partition: 0, Position: 3, Key: "x"}))
	adminMust(t, "skip")(f.op.Skip(ctx, f.ref, consumer.Skip{Source: adminTopic, Partition: 0, Position: 3, Key: "x"}))

	ch := adminMust(t, "unsubscribe event store")(f.op.Unsubscribe(ctx, f.ref, es))
	if ch.Deleted != 6 || ch.SkipsDeleted != 1 || ch.Checkpoints != int64(f.e.Partitions) || ch.ConsumerDeleted {
		t.Errorf("unsubscribe from the event store changed %+v, want 6 undelivered, 1 skip, %d checkpoints, the consumer kept", ch, f.e.Partitions)
	}
	// The consumer keeps running on the other topic, its rows there kept.
	if _, err := f.reg.Get(ctx, f.id); err != nil {
		t.Fatalf("consumer row after the first unsubscribe: %v", err)
	}
	cps, err := f.reg.Checkpoints(ctx, f.id)
	if err != nil || len(cps) != 2 || cps[0].Source != adminTopic {
		t.Fatalf("checkpoints left: %v %+v, want the topic's 2", err, cps)
	}
	if n := len(f.rows(t)); n != 1 {
		t.Errorf("%d undelivered rows left, want the topic's 1", n)
	}
	_, err = f.op.Unsubscribe(ctx, f.ref, es)
	expectErr[*consumer.NotSubscribedError](t, err, "unsubscribing twice")

	ch = adminMust(t, "unsubscribe topic")(f.op.Unsubscribe(ctx, f.ref, adminTopic))
	if ch.Deleted != 1 || ch.SkipsDeleted != 1 || ch.Checkpoints != 2 || !ch.ConsumerDeleted {
		t.Errorf("unsubscribe from the last topic changed %+v, want its rows and the consumer's", ch)
	}
	for _, table := range []string{"consumers_table", "consumer_checkpoints_table", "consumer_undelivered_messages_table", "consumer_skipped_messages_table"} {
		if n := adminCountRows(t, f.e, table, f.id); n != 0 {
			t.Errorf("%d orphan rows in %s", n, table)
		}
	}
	_, err = f.op.Status(ctx, f.ref)
	if !errors.Is(err, consumer.ErrNotFound) {
		t.Errorf("status of the unsubscribed consumer: %v, want ErrNotFound", err)
	}
	// Subscribing again starts a new, running consumer.
	c, err := f.reg.Subscribe(ctx, f.ref.Type, f.ref.Name, consumer.SourceRef{Name: es, Partitions: f.e.Partitions})
	if err != nil || c.ID == f.id || c.State != consumer.Running {
		t.Errorf("subscribing again: %v %+v", err, c)
	}
}

// Every operation refuses bad input with a typed error before any SQL:
// the context is cancelled, so an operation that reached the database
// would fail with the context's error instead.
func testAdminRefused(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := consumer.Ref{Type: strings.Repeat("t", consumer.MaxTypeLength+1), Name: "n"}
	empty := consumer.Ref{Type: "projection", Name: ""}
	es := engine.EventStoreTopic
	refs := []consumer.Ref{long, empty}
	if env.Catalogue.KeysIgnoreTrailingSpaces {
		refs = append(refs, consumer.Ref{Type: "projection", Name: "account-summary "})
	}
	for _, ref := range refs {
		ops := map[string]func() error{
			"status":      func() error { _, err := f.op.Status(ctx, ref); return err },
			"dead":        func() error { _, err := f.op.DeadLetters(ctx, ref); return err },
			"pause":       func() error { _, err := f.op.Pause(ctx, ref); return err },
			"resume":      func() error { _, err := f.op.Resume(ctx, ref); return err },
			"resume past": func() error { _, err := f.op.ResumePast(ctx, ref); return err },
			"retry":       func() error { _, err := f.op.RetryDeadLetters(ctx, ref, consumer.AllDeadLetters()); return err },
			"delete":      func() error { _, err := f.op.DeleteDeadLetters(ctx, ref, consumer.AllDeadLetters()); return err },
			"skip":        func() error { _, err := f.op.Skip(ctx, ref, consumer.Skip{Source: es, Position: 1}); return err },
			"unsubscribe": func() error { _, err := f.op.Unsubscribe(ctx, ref, es); return err },
		}
		for name, op := range ops {
			if err := op(); !errors.Is(err, consumer.ErrInvalidName) {
				t.Errorf("%s of %q: %v, want ErrInvalidName before any SQL", name, ref, err)
			}
		}
	}
	selectors := []consumer.Selector{
		{}, {ID: "not-a-uuid"}, {ID: f.id, All: true}, {Key: "k", KeyGiven: true},
		{Source: es, Key: strings.Repeat("k", consumer.MaxKeyLength+1), KeyGiven: true},
	}
	for _, sel := range selectors {
		if _, err := f.op.RetryDeadLetters(ctx, f.ref, sel); !errors.Is(err, consumer.ErrInvalidSelector) {
			t.Errorf("retry with %+v: %v, want ErrInvalidSelector", sel, err)
		}
		if _, err := f.op.DeleteDeadLetters(ctx, f.ref, sel); !errors.Is(err, consumer.ErrInvalidSelector) {
			t.Errorf("delete with %+v: %v, want ErrInvalidSelector", sel, err)
		}
	}
	_, err := f.op.RetryDeadLetters(ctx, f.ref, consumer.ByKey("", "k"))
	expectErr[*consumer.SelectorError](t, err, "a key without its source")
	for _, s := range []consumer.Skip{{Source: es, Position: 0}, {Source: es, Position: 1, Partition: -1}, {Source: es, Position: 1, Key: "k", EveryKey: true}} {
		if _, err := f.op.Skip(ctx, f.ref, s); !errors.Is(err, consumer.ErrInvalidSkip) {
			t.Errorf("skip %+v: %v, want ErrInvalidSkip", s, err)
		}
	}
	if _, err := f.op.Skip(ctx, f.ref, consumer.Skip{Source: "", Position: 1}); !errors.Is(err, consumer.ErrInvalidName) {
		t.Errorf("skip without a source: %v, want ErrInvalidName", err)
	}
	if _, err := f.op.Unsubscribe(ctx, f.ref, strings.Repeat("s", consumer.MaxSourceLength+1)); !errors.Is(err, consumer.ErrInvalidName) {
		t.Errorf("unsubscribe from a too long source: %v, want ErrInvalidName", err)
	}
	// With a live context, an unknown consumer is ErrNotFound.
	if _, err := f.op.Pause(context.Background(), consumer.Ref{Type: "projection", Name: "nobody"}); !errors.Is(err, consumer.ErrNotFound) {
		t.Errorf("pausing an unknown consumer: %v, want ErrNotFound", err)
	}
	if _, err := consumer.ParseRef("no-slash"); !errors.Is(err, consumer.ErrInvalidName) {
		t.Errorf("ParseRef without a slash: %v", err)
	}
}
