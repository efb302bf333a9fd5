package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// This file builds the rows of a batch (a lone append is a batch of one)
// and checks each caller's expected versions.
//
// Versions are read in the batch's transaction and checked in Go, caller
// after caller in queue order, against the version the stream has once
// the earlier callers of the batch have appended: a caller whose expected
// version (or aggregate id) fails is answered with its typed error and
// leaves the batch; the others commit. On counter-row dialects a batch of
// several callers takes the counter first, so every read is made under
// the lock every writer of the database takes: the versions cannot move
// before the commit. Where the insert draws positions (PostgreSQL's
// sequence) there is no such lock: a stream another process moves between
// the read and the insert makes the insert fail, and then every caller
// runs alone (run). A batch of exact versions only is first tried without
// the read (group_checked.go).
//
// A lone append reads less: a NoStream stream is not read (the unique
// constraint on sequence 0 checks it), nor is an exact version where the
// insert checks it (CheckedSequence in the stream's first row); a refused
// insert is then the caller's typed error (translate).

// computedStreams are the streams whose sequence numbers the insert
// computes (RowInsert.NextSequence), with no read: one event in the whole
// batch, appended with Any, where the plan lets the insert compute them
// (plan.computesFor).
// A stream with more events is read once instead, as a lone append does: a
// subquery per row costs far more than one version read once a batch holds
// hundreds of rows (figures in docs/performance.md).
func (s *Store) computedStreams(batch []*pending) map[key]bool {
	if !s.plan.computesFor(len(batch)) {
		return nil
	}
	out, events := map[key]bool{}, map[key]int{}
	for _, p := range batch {
		for _, st := range p.streams {
			if len(st.Events) == 0 {
				continue
			}
			k := s.key(st)
			events[k] += len(st.Events)
			if v, seen := out[k]; !seen || v {
				out[k] = st.Expected == Any
			}
		}
	}
	for k, n := range events {
		if n > 1 {
			out[k] = false
		}
	}
	return out
}

// oneStatementBatch tells whether the batch is one insert: every stream
// computed, one table, one chunk.
func (s *Store) oneStatementBatch(batch []*pending, computed map[key]bool, total int) bool {
	if len(computed) == 0 || total > s.plan.maxRows(row{computed: true}) {
		return false
	}
	table := ""
	for _, p := range batch {
		for _, st := range p.streams {
			if len(st.Events) == 0 {
				continue
			}
			k := s.key(st)
			if !computed[k] || table != "" && k.table != table {
				return false
			}
			table = k.table
		}
	}
	return true
}

// streamState is a stream's version and owner as the batch goes.
type streamState struct {
	version int64
	owner   string
}

// batchRows checks each caller's expectations in queue order against the
// streams' versions and returns the rows of the callers that pass, each
// indexed by its place. A refused caller's error is set in its p.err.
// Several callers' versions are read first, StreamVersionsWidth a
// statement; a lone append reads each stream it must read on its own.
func (s *Store) batchRows(ctx context.Context, q queryer, batch []*pending, computed map[key]bool, precheck bool) ([]row, error) {
	states := map[key]streamState{}
	if len(batch) > 1 {
		var err error
		if states, err = s.readVersions(ctx, q, batch, computed); err != nil {
			return nil, err
		}
	}
	lone := len(batch) == 1 && !precheck
	var rows []row
	now := time.Now().UTC()
	for ci, p := range batch {
		mine := map[key]streamState{} // this caller's changes, kept if it passes
		var own []row
		versions := map[string]int64{}
		for _, st := range p.streams {
			if len(st.Events) == 0 {
				continue
			}
			k, vk := s.key(st), versionKey(st)
			part := PartitionKey(st.AggregateID, s.e.Partitions)
			if computed[k] {
				// Any, and the insert computes the number: no read.
				for _, ev := range st.Events {
					r, err := s.eventRow(k.table, st, ev, 0, part, now)
					if err != nil {
						return nil, err
					}
					r.computed, r.stream, r.caller = true, vk, ci
					own = append(own, r)
				}
				versions[vk] = -1 // set from the insert's result
				continue
			}
			cur, checked, err := s.streamStart(ctx, q, st, k, mine, states, lone)
			if err != nil {
				return nil, err
			}
			if cur.owner != "" && cur.owner != st.AggregateType {
				p.err = &AggregateIDTakenError{Table: k.table, AggregateID: st.AggregateID, AggregateType: st.AggregateType, OwnerType: cur.owner}
				break
			}
			if !versionMatches(st.Expected, cur.version) {
				p.err = &ConcurrencyError{AggregateType: st.AggregateType, AggregateID: st.AggregateID, Expected: st.Expected, Actual: cur.version}
				break
			}
			for i, ev := range st.Events {
				cur.version++
				r, err := s.eventRow(k.table, st, ev, cur.version, part, now)
				if err != nil {
					return nil, err
				}
				r.caller = ci
				if checked && i == 0 {
					r.vals[pExpectedVersion], r.checked = cur.version-1, true
				}
				own = append(own, r)
			}
			cur.owner = st.AggregateType
			mine[k] = cur
			versions[vk] = cur.version
		}
		if p.err != nil {
			continue
		}
		for k, st := range mine {
			states[k] = st
		}
		p.res.Versions = versions
		rows = append(rows, own...)
	}
	for i := range rows {
		rows[i].index = i
	}
	return rows, nil
}

// streamStart is the version and owner st starts from: this caller's own
// earlier rows for it, or (a lone append) what the insert itself checks
// (checked: CheckedSequence in its first row), or the version read (the
// batch's first, else StreamVersion now).
func (s *Store) streamStart(ctx context.Context, q queryer, st Stream, k key, mine, states map[key]streamState, lone bool) (streamState, bool, error) {
	if cur, ok := mine[k]; ok {
		return cur, false, nil
	}
	exact, isExact := st.Expected.Exact()
	switch {
	case lone && st.Expected == NoStream:
		return streamState{version: -1}, false, nil
	case lone && isExact && s.plan.checks:
		return streamState{version: exact}, true, nil
	}
	if cur, ok := states[k]; ok {
		return cur, false, nil
	}
	v, owner, err := s.streamVersion(ctx, q, k.table, st.AggregateID)
	if err != nil {
		return streamState{}, false, err
	}
	cur := streamState{version: v, owner: owner}
	states[k] = cur
	return cur, false, nil
}

// readVersions reads the versions of the batch's streams that are not
// computed, StreamVersionsWidth per statement where the dialect has
// StreamVersions (else batchRows reads them one by one), keyed by table
// and id; a stream with no row is at -1.
func (s *Store) readVersions(ctx context.Context, q queryer, batch []*pending, computed map[key]bool) (map[key]streamState, error) {
	states := map[key]streamState{}
	if !s.e.Has(dialect.StreamVersions) {
		return states, nil
	}
	byTable := map[string][]string{}
	var tables []string
	for _, p := range batch {
		for _, st := range p.streams {
			k := s.key(st)
			table := k.table
			if len(st.Events) == 0 || computed[k] {
				continue
			}
			if _, seen := states[k]; seen {
				continue
			}
			states[k] = streamState{version: -1}
			if _, ok := byTable[table]; !ok {
				tables = append(tables, table)
			}
			byTable[table] = append(byTable[table], st.AggregateID)
		}
	}
	for _, table := range tables {
		ids := byTable[table]
		for start := 0; start < len(ids); start += dialect.StreamVersionsWidth {
			part := ids[start:min(len(ids), start+dialect.StreamVersionsWidth)]
			if err := s.readVersionsOnce(ctx, q, table, part, states); err != nil {
				return nil, err
			}
		}
	}
	return states, nil
}

func (s *Store) readVersionsOnce(ctx context.Context, q queryer, table string, ids []string, states map[key]streamState) error {
	id := func(i int) string { return ids[min(i, len(ids)-1)] } // a repeated id fills the rest
	rs, err := stmt.QueryStreamVersions(ctx, s.e, q, stmt.StreamVersionsParams{
		IDA: id(0), IDB: id(1), IDC: id(2), IDD: id(3), IDE: id(4), IDF: id(5), IDG: id(6), IDH: id(7),
		IDI: id(8), IDJ: id(9), IDK: id(10), IDL: id(11), IDM: id(12), IDN: id(13), IDO: id(14), IDP: id(15),
		EventStoreTable: table})
	if err != nil {
		return fmt.Errorf("reading stream versions: %w", err)
	}
	defer rs.Close()
	asked := make(map[string]bool, len(ids))
	for _, id := range ids {
		asked[id] = true
	}
	foreign := false
	for rs.Next() {
		r, err := rs.Row()
		if err != nil {
			return fmt.Errorf("reading stream versions: %w", err)
		}
		id, v, owner := r.AggregateID, r.SequenceNo, r.AggregateType
		if !asked[id] {
			foreign = true // the engine matched an id that is not the one asked (collation)
			continue
		}
		delete(asked, id)
		states[key{table, id}] = streamState{version: v, owner: owner}
	}
	if foreign {
		// Which asked id it stands for is the engine's business: the ids
		// without an exact row are read one by one (StreamVersion).
		for id := range asked {
			delete(states, key{table, id})
		}
	}
	return rs.Err()
}
