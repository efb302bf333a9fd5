package conformance

import (
	"slices"
	"sync"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/log/position"
)

// committedGate is a gate that also records the committed ends appends
// report (eventstore.CommittedNudger), as hwm.Advancer takes them.
type committedGate struct {
	*gate
	mu   sync.Mutex
	ends []int64
}

func (g *committedGate) NudgeCommitted(end int64) {
	g.mu.Lock()
	g.ends = append(g.ends, end)
	g.mu.Unlock()
	g.Nudge()
}

// testGroupCommitNudgesCommittedEnd forms one batch of three callers and
// checks that it nudges the advancer as a lone append does: with the
// batch's committed end where the strategy lets an append report one (a
// counter row: the highest position of the batch), with none elsewhere.
func testGroupCommitNudgesCommittedEnd(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	g := &committedGate{gate: newGate()}
	s := eventstore.New(e, g, eventstore.WithGroupCommit(true))
	id := newID(t)
	calls := []*call{
		{streams: []eventstore.Stream{one(id+"-a", eventstore.NoStream, `{"c":0}`)}},
		{streams: []eventstore.Stream{one(id+"-b", eventstore.Any, `{"c":1}`, `{"c":1,"n":2}`)}},
		{streams: []eventstore.Stream{one(id+"-a", eventstore.Exactly(0), `{"c":2}`)}},
	}
	queueBehindGate(t, s, g.gate, calls)
	g.mu.Lock()
	leader := len(g.ends) // the lone leader's own report, if any
	g.mu.Unlock()
	close(g.release)
	var positions []int64
	for i, c := range calls {
		<-c.done
		if c.err != nil {
			t.Fatalf("caller %d: %v", i, c.err)
		}
		positions = append(positions, c.res.Positions...)
	}
	if st := s.GroupCommitStats(); st.MaxCallers < int64(len(calls)) {
		t.Fatalf("the %d queued callers did not commit as one batch: %+v", len(calls), st)
	}
	g.mu.Lock()
	ends := slices.Clone(g.ends[leader:])
	g.mu.Unlock()
	want, reports := position.Of(e).Writer(engine.EventStorePositions).Committed(positions)
	switch {
	case reports && !slices.Equal(ends, []int64{want}):
		t.Errorf("the batch reported committed ends %v, want [%d] (its highest position)", ends, want)
	case !reports && len(ends) != 0:
		t.Errorf("the batch reported committed ends %v where the strategy makes none", ends)
	}
}
