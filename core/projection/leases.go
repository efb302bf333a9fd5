package projection

import (
	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/lease"
)

// WithLeases returns o (the options Options returned) run under the
// process's partition lease coordinator co, with distribution d
// (lease.SingleOwner when none is given): one instance of the projection
// applies every partition, the others take over once its lease lapses,
// and each apply is fenced under the lease's generation, so an event is
// applied once whichever instance applies it. lease.Spread shares the
// partitions out instead (see "Several instances" in docs/projections.md).
func WithLeases(o consumer.Options, co *lease.Coordinator, d ...lease.Distribution) consumer.Options {
	o.Leases, o.Distribution = co, lease.SingleOwner
	if len(d) > 0 {
		o.Distribution = d[0]
	}
	return o
}
