package conformance

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/internal/console"
)

func consumerConsoleTests() []Test {
	return []Test{
		{"consumer/console_pages_metrics_and_retry", testConsolePages},
	}
}

var consoleCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// testConsolePages renders every page of the operator console (tidemark
// serve) on the target: a dead letter whose failure reason and payload hold
// <script> shows escaped with its payload read from the source, /metrics
// parses with the consumer's dead letter and the mark, and a retry posted
// with the page's CSRF token gives the row a fresh budget.
func testConsolePages(t T, env *Env) {
	f := newAdminFixture(t, env)
	ctx := context.Background()
	res := appendAndPublish(t, f.s, f.e, eventstore.Stream{AggregateType: "test.Account", AggregateID: "c-1",
		Events: []eventstore.Event{ev("test.E", `{"note":"<script>alert(1)</script>"}`)}})
	pos := res.Positions[0]
	evs, err := f.s.ReadAll(ctx, pos-1, 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("reading the event back: %v, %v", evs, err)
	}
	dl := f.insert(t, adminRow{source: engine.EventStoreTopic, partition: evs[0].PartitionKey, key: "test.Account/c-1", pos: pos,
		status: consumer.StatusDeadLetter, failures: 5, reason: "<script>alert('reason')</script>"})
	srv, err := console.New(f.op, console.Options{Logger: slog.New(slog.DiscardHandler),
		Sources: func(_ context.Context, name string) (consumer.Source, error) {
			if name != engine.EventStoreTopic {
				return nil, errors.New("no source " + name)
			}
			return consumer.EventStore(f.s, nil), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	do := func(req *http.Request) (int, string) {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	var csrf string
	for _, p := range []string{"/", "/consumers", "/undelivered", "/leases", "/sagas", "/healthz"} {
		code, body := do(httptest.NewRequest(http.MethodGet, p, nil))
		if code != http.StatusOK || strings.Contains(body, "<script>alert") {
			t.Fatalf("GET %s: %d (want 200, nothing unescaped):\n%s", p, code, body)
		}
		if p == "/undelivered" {
			for _, want := range []string{"&lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt;", "&lt;script&gt;alert(1)&lt;/script&gt;", dl} {
				if !strings.Contains(body, want) {
					t.Errorf("the dead-letter page lacks %s:\n%s", want, body)
				}
			}
		}
		if m := consoleCSRF.FindStringSubmatch(body); m != nil {
			csrf = m[1]
		}
	}
	code, body := do(httptest.NewRequest(http.MethodGet, "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if code != http.StatusOK || err != nil {
		t.Fatalf("GET /metrics: %d, %v:\n%s", code, err, body)
	}
	got := map[string]float64{}
	for _, name := range []string{"tidemark_hwm_mark", "tidemark_hwm_lag", "tidemark_consumer_undelivered"} {
		for _, m := range families[name].GetMetric() {
			labels := []string{name}
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			got[strings.Join(labels, " ")] = m.GetGauge().GetValue()
		}
	}
	if v := got["tidemark_hwm_mark "+engine.EventStoreTopic]; v < float64(pos) {
		t.Errorf("tidemark_hwm_mark %v, want at least %d; series %v", v, pos, got)
	}
	// The committed end read through the dialect's position strategy: the
	// event is committed and below the mark, so nothing is handed out above.
	if v, ok := got["tidemark_hwm_lag "+engine.EventStoreTopic]; !ok || v != 0 {
		t.Errorf("tidemark_hwm_lag %v, %v, want 0; series %v", v, ok, got)
	}
	if v := got["tidemark_consumer_undelivered account-summary projection DEAD_LETTER"]; v != 1 {
		t.Errorf("dead letters %v, want 1; series %v", v, got)
	}
	form := url.Values{"csrf": {csrf}, "action": {"retry"}, "consumer": {f.ref.String()}, "select": {"id"}, "id": {dl}}
	req := httptest.NewRequest(http.MethodPost, "/action", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if code, body := do(req); code != http.StatusOK || !strings.Contains(body, "1 released with a fresh budget") {
		t.Fatalf("POST retry: %d:\n%s", code, body)
	}
	adminExpectRow(t, f.rows(t), dl, consumer.StatusFailed, 0)
}
