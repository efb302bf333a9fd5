package projection

import (
	"github.com/tidemarkdb/tidemark/core/topic"
)

// ReadModel is an upstream projection's read model as a downstream
// listener gets it: its state after the upstream apply, or, for a
// tombstone (Deleted), its last state.
type ReadModel[U any] struct {
	Key     string
	Value   U
	Deleted bool
	Record  topic.ReadModelRecord
}

// upstreamListener applies one message of an upstream read-model topic.
type upstreamListener[S any] func(rec topic.ReadModelRecord, codec Codec, s *S) error

// OnReadModel chains p on projection upstream: fn gets each message of
// upstream's read-model topic, its state decoded into U, in order per
// read model. For Aggregate scope the read model it updates is the one of
// the upstream read model's key. The downstream's own messages carry the
// upstream message's metadata and its cascade depth plus one.
func OnReadModel[U, S any](p *Projection[S], upstream string, fn func(ReadModel[U], *S) error) {
	if upstream == "" || upstream == p.name {
		p.fail("OnReadModel needs another projection's name, not %q", upstream)
		return
	}
	if _, dup := p.upstream[upstream]; dup {
		p.fail("two listeners for the read models of %q", upstream)
		return
	}
	p.upstream[upstream] = func(rec topic.ReadModelRecord, codec Codec, s *S) error {
		rm := ReadModel[U]{Key: rec.Key, Deleted: rec.Deleted, Record: rec}
		if err := codec.Unmarshal(rec.Payload, &rm.Value); err != nil {
			return &PayloadError{Projection: p.name, EventType: rec.Type, EventID: rec.ID, Err: err}
		}
		return fn(rm, s)
	}
}

// Upstream are the projections p is chained on, by name.
func (p *Projection[S]) Upstream() []string {
	out := make([]string, 0, len(p.upstream))
	for n := range p.upstream {
		out = append(out, n)
	}
	return out
}
