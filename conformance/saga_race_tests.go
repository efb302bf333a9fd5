package conformance

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/saga"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// The race saga: its handlers park the first event marked Park between
// the instance's read and its save, so another apply commits in between.
type raceStart struct {
	ID   string `json:"id"`
	Park bool   `json:"park"`
}
type raceStep struct {
	ID   string `json:"id"`
	Park bool   `json:"park"`
}
type raceState struct{ Starts, Steps int }

// parker parks the first caller until released; later calls pass.
type parker struct {
	once     sync.Once
	parked   chan struct{}
	released chan struct{}
}

func newParker() *parker { return &parker{parked: make(chan struct{}), released: make(chan struct{})} }

func (p *parker) park() (err error) {
	p.once.Do(func() {
		close(p.parked)
		select {
		case <-p.released:
		case <-time.After(testtime.D(time.Minute)): // a guard against hanging, not an assertion
			err = errors.New("never released: the other apply did not commit while this one held its read")
		}
	})
	return err
}

func raceSaga(p *parker) *saga.Saga[raceState] {
	s := saga.New[raceState]("conformance.Race")
	saga.StartOn(s, func(e raceStart) string { return e.ID }, func(_ saga.Context, e raceStart, st *raceState) error {
		if e.Park {
			if err := p.park(); err != nil {
				return err
			}
		}
		st.Starts++
		return nil
	})
	saga.On(s, func(e raceStep) string { return e.ID }, func(_ saga.Context, e raceStep, st *raceState) error {
		if e.Park {
			if err := p.park(); err != nil {
				return err
			}
		}
		st.Steps++
		return nil
	})
	return s
}

// testSagaConflictRetried: an apply that read an instance before another
// apply's update committed fails its conditional update with a
// ConflictError and is run again from a fresh read (both steps counted);
// two concurrent starts of one instance meet on the unique key: the loser's
// insert is a ConflictError, run again it finds the instance and applies
// there (one instance, both starts counted). The conflicts are counted as
// they happen, so the test fails if none did.
func testSagaConflictRetried(t T, env *Env) {
	if l := env.Catalogue.Locks; l.SerializesWriters || l.ReadersWaitForWriters {
		skipf(t, "%s runs one writer at a time or makes readers wait for writers: no apply commits between another's read and its save, so no conflict can happen", env.Catalogue.Identity.Name)
	}
	e := openEngine(t, env, defaultConfig(env))
	for _, c := range []struct {
		name       string
		setup      any
		parked, in any
		want       raceState
	}{
		{"update", raceStart{ID: "race-u"}, raceStep{ID: "race-u", Park: true}, raceStep{ID: "race-u"}, raceState{Starts: 1, Steps: 2}},
		{"start", nil, raceStart{ID: "race-s", Park: true}, raceStart{ID: "race-s"}, raceState{Starts: 2}},
	} {
		p := newParker()
		st, err := saga.Open(e, raceSaga(p))
		if err != nil {
			t.Fatalf("saga.Open: %v", err)
		}
		if c.setup != nil {
			if _, err := raceApply(e, st, sagaRecord(t, c.setup)); err != nil {
				t.Fatalf("%s: setup: %v", c.name, err)
			}
		}
		conflicts := raceOnce(t, e, st, p, sagaRecord(t, c.parked), sagaRecord(t, c.in))
		if conflicts < 1 {
			t.Errorf("%s: the parked apply met no ConflictError: nothing was retried", c.name)
		}
		id := map[bool]string{true: "race-u", false: "race-s"}[c.name == "update"]
		in, ok, err := st.Get(context.Background(), id)
		if err != nil || !ok || in.State != c.want {
			t.Errorf("%s: instance %+v (found %v, %v), want state %+v", c.name, in, ok, err, c.want)
		}
		if n := countInstances(t, e, "conformance.Race", id); n != 1 {
			t.Errorf("%s: %d rows of %s, want 1", c.name, n, id)
		}
	}
}

// raceApply applies rec in a transaction run again on a transient error,
// counting the ConflictErrors it met.
func raceApply(e *engine.Engine, st *saga.Store[raceState], rec eventstore.Recorded) (int64, error) {
	var conflicts int64
	ctx := context.Background()
	err := e.InTx(ctx, engine.OpWrite, engine.TransientRetry{Unbounded: true}, func(tx *sql.Tx) error {
		err := st.Apply(ctx, tx, rec)
		var ce *saga.ConflictError
		if errors.As(err, &ce) {
			conflicts++
		}
		return err
	})
	return conflicts, err
}

// raceOnce applies parked in a goroutine until its handler parks (the
// instance read), applies other to commit, releases the parked apply and
// returns the conflicts it met.
func raceOnce(t T, e *engine.Engine, st *saga.Store[raceState], p *parker, parked, other eventstore.Recorded) int64 {
	t.Helper()
	type result struct {
		conflicts int64
		err       error
	}
	done := make(chan result, 1)
	go func() {
		n, err := raceApply(e, st, parked)
		done <- result{n, err}
	}()
	select {
	case <-p.parked:
	case r := <-done:
		t.Fatalf("the parked apply ended before its handler ran: %+v", r)
	}
	if _, err := raceApply(e, st, other); err != nil {
		close(p.released)
		t.Fatalf("the apply racing the parked one: %v", err)
	}
	close(p.released)
	r := <-done
	if r.err != nil {
		t.Fatalf("the parked apply: %v", r.err)
	}
	return r.conflicts
}

// countInstances counts the rows of one saga instance in the shared table.
func countInstances(t T, e *engine.Engine, sagaType, sagaID string) int {
	t.Helper()
	c, err := e.CompileText(`SELECT COUNT(*) FROM ${saga_instances_table} WHERE saga_type = #{saga_type} AND saga_id = #{saga_id}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.Args(map[string]any{"saga_type": sagaType, "saga_id": sagaID})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := e.DB.QueryRowContext(context.Background(), c.SQL, args...).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", sagaID, err)
	}
	return n
}
