package projection

import "github.com/tidemarkdb/tidemark/core/consumer"

// The error policies of a projection's consumer: what becomes of an event
// whose listener (or write) failed and whose retry budget is spent. Set
// one on the options Options returns (OnError); Halt is the default.
const (
	// Halt halts the consumer with APPLY_ERROR: the read models hold the
	// events before the failing one, and nothing is applied until an
	// operator resumes it (the failing event is tried again) or skips it.
	Halt = consumer.PolicyHalt
	// Skip passes the failing event over: it is parked as a dead letter
	// (DEAD_LETTER) an operator can retry or delete, and the later events
	// of its read model and of every other are applied.
	Skip = consumer.PolicyDeadLetter
	// SkipKey parks the failing event and every later event of its key
	// (DEAD_LETTER_KEY) until an operator retries them; other keys go on.
	// The key is the event's aggregate, which is the read model's key of
	// an Aggregate projection.
	SkipKey = consumer.PolicyDeadLetterKey
)
