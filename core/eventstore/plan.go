package eventstore

import (
	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/log/position"
)

// plan is what the position strategy and the dialect's event insert let an
// append skip: decided once, when the store is made, so the lone path and
// group commit take their fast paths from one place and nothing else asks
// the strategy how the insert gets its positions.
type plan struct {
	// draws: the insert draws the positions and returns them, so an
	// append that reads nothing needs no transaction.
	draws bool
	// computes: the insert can compute a stream's next sequence number
	// (NextSequence) and return it: where it draws the positions, and on
	// a counter row where the dialect declares ComputedTail. On a counter
	// row that is as safe as reading the version first: every append holds
	// the counter row locked from before its insert until its commit, so
	// no other append's insert comes between the subquery and its row.
	computes bool
	// checks: the insert can check a stream's exact version
	// (CheckedSequence).
	checks bool
	ins    dialect.RowInsert
	events *engine.Insert
}

func newPlan(ins dialect.RowInsert, events *engine.Insert, w position.Writer) plan {
	draws := w.Draws()
	return plan{
		draws:    draws,
		computes: ins.NextSequence != "" && (draws || ins.ComputedTail != ""),
		checks:   ins.CheckedSequence != "",
		ins:      ins,
		events:   events,
	}
}

// key is a stream's identity in storage: its table and aggregate id (two
// aggregate types that share a table share their ids).
type key struct{ table, id string }

// key is st's identity in storage.
func (s *Store) key(st Stream) key { return key{s.eventTable(st.AggregateType), st.AggregateID} }

// versionKey is st's key in Appended.Versions.
func versionKey(st Stream) string { return st.AggregateType + "/" + st.AggregateID }

// oneStatement tells whether a lone append of streams is one autocommit
// INSERT: one stream, one chunk of the widest shape it can take, positions
// and sequence numbers returned by the insert, and an expectation the
// statement itself can enforce.
func (p plan) oneStatement(streams []Stream) bool {
	if !p.draws || len(streams) != 1 || streams[0].Expected == StreamExists {
		return false
	}
	return len(streams[0].Events) <= p.events.MaxRows(p.shape(row{computed: true, checked: true}))
}

// checksBatch tells whether a batch's exact versions can be checked by its
// insert instead of read first: the dialect has CheckedSequence and the
// insert draws the positions (one autocommit statement, which does not see
// its own rows, so every row of a stream checks the version the stream had
// before the statement). On a counter row the versions are read under the
// counter's lock instead.
func (p plan) checksBatch() bool { return p.draws && p.checks }

// computesFor tells whether the streams appended with Any of a batch of n
// callers may have their sequence numbers computed by the insert, with no
// read: a lone append's where the insert computes them (computes), a
// batch's only where the insert also draws the positions.
func (p plan) computesFor(n int) bool {
	if n == 1 {
		return p.computes
	}
	return p.draws && p.ins.NextSequence != ""
}

// returns tells whether an insert of shape returns the rows' positions and
// sequence numbers: it draws them, or a counter row's ComputedTail
// returns the computed rows.
func (p plan) returns(shape engine.InsertShape) bool { return p.draws || shape.Tail != "" }

// The insert's shapes: which expressions replace #{sequence_no}.
const (
	variantPlain       = "plain"
	variantComputed    = "computed" // NextSequence in every row
	variantChecked     = "checked"  // CheckedSequence in the first row
	variantBoth        = "computed+checked"
	variantCheckedRows = "checked-rows" // CheckedSequence in every row
)

// shape is the insert shape of a chunk starting with r.
func (p plan) shape(r row) engine.InsertShape {
	sh := engine.InsertShape{Tables: map[string]string{"event_store_table": r.table}, Variant: variantPlain}
	if r.checkAll {
		sh.Exprs, sh.Variant = map[string]string{"sequence_no": p.ins.CheckedSequence}, variantCheckedRows
		return sh
	}
	if r.computed {
		sh.Exprs, sh.Variant = map[string]string{"sequence_no": p.ins.NextSequence}, variantComputed
		if !p.draws {
			sh.Tail = p.ins.ComputedTail // a counter row's insert returns the computed rows
		}
	}
	if r.checked {
		sh.FirstExprs, sh.Variant = map[string]string{"sequence_no": p.ins.CheckedSequence}, variantChecked
		if r.computed {
			sh.Variant = variantBoth
		}
	}
	return sh
}

// maxRows is the most rows one insert of the shape starting with r carries.
func (p plan) maxRows(r row) int { return p.events.MaxRows(p.shape(r)) }
