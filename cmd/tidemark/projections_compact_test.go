package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/topic"
)

// TestProjectionsCompact runs `tidemark projections compact` on SQLite: a
// bad name or a negative duration is refused before the engine opens;
// a compaction deletes every superseded state of the projection's
// read-model topic, keeps the latest of each key and prints what it did.
func TestProjectionsCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: opens a database through the plugin")
	}
	ctx := context.Background()
	prov := harness.NewProvider()
	t.Cleanup(func() { prov.Close() })
	f := newCLIFixture(t, prov, harness.EngineSQLite)
	cli := func(args ...string) (string, error) {
		return run(t, projectionsCmd(), append(append([]string{"compact"}, args...), f.args...)...)
	}
	if _, err := cli("bad\xffname"); !errors.Is(err, consumer.ErrInvalidName) {
		t.Errorf("compact of an invalid name: %v, want ErrInvalidName", err)
	}
	if _, err := cli("account-summary", "--tombstone-max-age", "-1s"); !errors.Is(err, topic.ErrInvalidCompaction) {
		t.Errorf("compact with a negative tombstone age: %v, want ErrInvalidCompaction", err)
	}
	tp, err := topic.OpenReadModel(ctx, f.e, "account-summary")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := f.e.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []topic.ReadModelMessage
	for i := range 6 {
		msgs = append(msgs, topic.ReadModelMessage{Key: fmt.Sprintf("acc-%d", i%2), Type: "Summary", Payload: []byte(fmt.Sprintf(`{"v":%d}`, i)), CascadeDepth: 1})
	}
	pub, err := tp.PublishTx(ctx, tx, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	last := pub[len(pub)-1].Position
	out, err := cli("account-summary")
	if err != nil || !strings.Contains(out, fmt.Sprintf("compacted projection/account-summary through %d: 4 superseded, 0 tombstones deleted", last)) {
		t.Fatalf("compact: %v %q", err, out)
	}
	recs, err := tp.ReadTopic(ctx, 0, 100)
	if err != nil || len(recs) != 2 || recs[0].Position != pub[4].Position || recs[1].Position != last {
		t.Errorf("after compact the topic holds %+v (%v), want the latest state of each key", recs, err)
	}
	if out, err := cli("account-summary", "--json"); err != nil || !strings.Contains(out, `"superseded_deleted": 0`) {
		t.Errorf("compact --json again: %v %q", err, out)
	}
}
