package console

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	sqliteplugin "github.com/tidemarkdb/tidemark/plugins/sqlite"
)

// Hostile texts: a payload and a failure reason that would run script if
// a page printed them unescaped.
const (
	scriptPayload = `{"note":"<script>alert('payload')</script>"}`
	scriptReason  = `<script>alert('reason')</script>`
)

var (
	deadRef = consumer.Ref{Type: "projection", Name: "dead-letters"}
	haltRef = consumer.Ref{Type: "projection", Name: "halting"}
)

// fixture is a SQLite engine (the catalogue in process: these are unit
// tests of the pages; the browser test in cmd/tidemark runs the plugin
// out of process) with two consumers that failed on the message of key
// acct/1: one dead-lettered it, one halted.
type fixture struct {
	e    *engine.Engine
	op   *consumer.Operator
	logs *bytes.Buffer
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "c.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := engine.Open(ctx, db, sqliteplugin.Catalogue(), engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	store := eventstore.New(e, nil)
	for i, payload := range []string{scriptPayload, `{"amount":5}`} {
		if _, err := store.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "acct/" + string(rune('1'+i)),
			Events: []eventstore.Event{{Type: "Opened", Payload: []byte(payload)}}}); err != nil {
			t.Fatal(err)
		}
	}
	a := hwm.New(e, hwm.Options{})
	for range 1000 { // a bound against hanging, not a timed assertion
		if _, err := a.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
		if m, err := store.Mark(ctx); err != nil || m >= 2 {
			break
		}
	}
	reg := consumer.NewRegistry(e, nil)
	src := consumer.EventStore(store, nil)
	for _, c := range []struct {
		ref    consumer.Ref
		policy consumer.ErrorPolicy
	}{{deadRef, consumer.PolicyDeadLetter}, {haltRef, consumer.PolicyHalt}} {
		r, err := consumer.NewRunner(ctx, reg, consumer.Options{Type: c.ref.Type, Name: c.ref.Name,
			Retry: consumer.RetryPolicy{MaxAttempts: 1}, OnError: c.policy, Logger: slog.New(slog.DiscardHandler),
			Routes: []consumer.Route{consumer.On(src, func(_ context.Context, _ *sql.Tx, m consumer.Msg[eventstore.Recorded]) error {
				if m.Key == "bank.Account/acct/1" {
					return errors.New(scriptReason)
				}
				return nil
			})}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Poll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return fixture{e: e, op: reg.Operator(), logs: &bytes.Buffer{}}
}

// server is a console on the fixture with opts (its logger the fixture's).
func (f fixture) server(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	opts.Logger = slog.New(slog.NewTextHandler(f.logs, nil))
	if opts.Sources == nil {
		opts.Sources = func(_ context.Context, name string) (consumer.Source, error) {
			if name != engine.EventStoreTopic {
				return nil, errors.New("unknown source " + name)
			}
			return consumer.EventStore(eventstore.New(f.e, nil), nil), nil
		}
	}
	s, err := New(f.op, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// get fetches path and returns the status and body.
func get(t *testing.T, c *http.Client, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// post submits form to /action.
func post(t *testing.T, base string, form url.Values, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/action", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrfOf is the CSRF token of a page's forms.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%s", page)
	}
	return m[1]
}

func (f fixture) state(t *testing.T, ref consumer.Ref) consumer.State {
	t.Helper()
	st, err := f.op.Status(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return st.State
}
