package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/projection"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// clockReading is the read model of testQueryTimeOfDay: a time of day.
type clockReading struct {
	At time.Time `json:"at"`
}

type clockRead struct {
	At time.Time `json:"at"`
}

// testQueryTimeOfDay projects a time of day with nine fractional digits
// into a TEMPORAL_TIME query column. The column must hold it cut to the
// digits the engine declares for TIME (EngineFacts.TimeOfDayDigits, at most
// the spec's 6), whatever its TIMESTAMP keeps: the core cuts what it binds,
// so an engine that rounds, or keeps no fraction in TIME, stores the cut.
// A finder given the uncut time finds the read model, and ranges on either
// side of the cut split as the cut says.
func testQueryTimeOfDay(t T, env *Env) {
	declaredDigits(t, env.Features.InstantDigits, "EngineFacts.InstantDigits")
	digits := schema.RequiredTimeDigits(&env.Catalogue)
	p := projection.New("clock-readings", func(string) clockReading { return clockReading{} })
	projection.On(p, func(e clockRead, s *clockReading) error { s.At = e.At; return nil })
	projection.Field(p, "read_time", projection.Time, func(s *clockReading) time.Time { return s.At })
	cfg := defaultConfig(env)
	cfg.QueryTables = append(cfg.QueryTables, p.QueryTable())
	e := openEngine(t, env, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	adv := hwm.New(e, hwm.Options{PollInterval: 10 * time.Millisecond})
	go func() { _ = adv.Run(ctx) }()
	st, err := projection.Open(ctx, e, p)
	if err != nil {
		t.Fatalf("projection.Open (the engine created its TIME column; its check must accept it): %v", err)
	}
	s := eventstore.New(e, adv)
	payload, _ := jsonOf(clockRead{At: nanoTime})
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "test.Clock", AggregateID: "clock-1",
		Events: []eventstore.Event{{Type: "clockRead", Payload: payload}}}); err != nil {
		t.Fatalf("Append: %v", err)
	}
	opts, err := st.Options(consumer.EventStore(s, adv))
	if err != nil {
		t.Fatal(err)
	}
	run, err := consumer.NewRunner(ctx, consumer.NewRegistry(e, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	waitForOr(t, "the reading applied", func() bool {
		if _, err := run.Poll(ctx); err != nil {
			t.Fatalf("Poll: %v", err)
		}
		_, ok, err := st.Get(ctx, "clock-1")
		return err == nil && ok
	}, func() string { return "no read model clock-1" })

	var raw any
	q := "SELECT read_time FROM " + st.Table() + " WHERE read_model_id = 'clock-1'"
	if err := e.DB.QueryRowContext(ctx, q).Scan(&raw); err != nil {
		t.Fatalf("reading the column: %v", err)
	}
	got, err := timeOfDay(raw)
	if err != nil {
		t.Fatalf("reading the column: %v", err)
	}
	want := truncate(nanoTime, digits).Format("15:04:05.000000000")
	if got != want {
		t.Errorf("the TIME column holds %s; %d digits declared (EngineFacts.TimeOfDayDigits, at most 6) means %s: the core binds the cut, so the engine keeps it unchanged",
			got, digits, want)
	}
	find := func(c projection.Cond) int {
		t.Helper()
		page, err := st.Find(ctx, projection.Query{Where: []projection.Cond{c}})
		if err != nil {
			t.Fatalf("Find: %v", err)
		}
		return len(page.Items)
	}
	unit := time.Duration(pow10(9 - digits))
	cut := truncate(nanoTime, digits)
	for _, c := range []struct {
		name string
		cond projection.Cond
		want int
	}{
		{"= the uncut time", projection.Eq("read_time", nanoTime), 1},
		{">= the uncut time", projection.Ge("read_time", nanoTime), 1},
		{"< the uncut time", projection.Lt("read_time", nanoTime), 0},
		{"< the next unit", projection.Lt("read_time", cut.Add(unit)), 1},
		{">= the next unit", projection.Ge("read_time", cut.Add(unit)), 0},
	} {
		if n := find(c.cond); n != c.want {
			t.Errorf("finder read_time %s (%d digits kept): %d read models, want %d", c.name, digits, n, c.want)
		}
	}
}

// timeOfDay is a TIME column's value as a driver returns it, as
// 15:04:05.000000000.
func timeOfDay(v any) (string, error) {
	switch v := v.(type) {
	case time.Time:
		return v.Format("15:04:05.000000000"), nil
	case []byte:
		return timeOfDay(string(v))
	case string:
		s := v
		if i := strings.LastIndexAny(s, " T"); i >= 0 {
			s = s[i+1:]
		}
		whole, frac, _ := strings.Cut(s, ".")
		if len(whole) != len("15:04:05") {
			return "", fmt.Errorf("a time of day %q", v)
		}
		frac = strings.TrimRight(frac, "Z")
		return whole + "." + (frac + "000000000")[:9], nil
	}
	return "", fmt.Errorf("a time of day of type %T (%v)", v, v)
}
