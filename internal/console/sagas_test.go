package console

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/saga"
)

// The Sagas page shows each saga type's open and completed instances and
// pending deadlines, and its instances, from the tables alone (no
// declaration), escaping what the database holds.
func TestSagasPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	type state struct{ N int }
	s := saga.New[state]("bank.<b>Watch</b>")
	saga.StartOnType(s, "Opened", func(e saga.Event[json.RawMessage]) string { return e.Recorded.AggregateID },
		func(ctx saga.Context, _ saga.Event[json.RawMessage], st *state) error {
			st.N++
			return saga.Schedule(ctx, "reminder", saga.In(time.Hour), nil)
		})
	saga.OnDeadline(s, "reminder", func(saga.Context, struct{}, *state) error { return nil })
	st, err := saga.Open(f.e, s)
	if err != nil {
		t.Fatal(err)
	}
	opts := st.Options(consumer.EventStore(eventstore.New(f.e, nil), nil))
	opts.Logger = slog.New(slog.DiscardHandler)
	r, err := consumer.NewRunner(ctx, consumer.NewRegistry(f.e, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.Poll(ctx); err != nil || n != 2 {
		t.Fatalf("the saga's poll applied %d, %v; want the fixture's 2 events", n, err)
	}
	ts := f.server(t, Options{})
	code, page := get(t, http.DefaultClient, ts.URL+"/sagas")
	if code != http.StatusOK {
		t.Fatalf("GET /sagas: %d\n%s", code, page)
	}
	if strings.Contains(page, "<b>Watch") {
		t.Fatalf("the saga type is not escaped:\n%s", page)
	}
	for _, want := range []string{
		`data-saga-type="bank.&lt;b&gt;Watch&lt;/b&gt;"`,
		`<td data-role="open">2</td><td data-role="completed">0</td><td data-role="deadlines">2</td><td data-role="overdue">0</td>`,
		"<td>acct/1</td>", "<td>acct/2</td>",
		`href="/sagas"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
}
