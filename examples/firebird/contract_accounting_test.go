package firebird_test

// Tests added with the engines-unlike-ours and advancer-latency work, each
// run on Firebird 3 (TIDEMARK_FIREBIRD_ALL=1).
func init() {
	passing = append(passing,
		"eventstore/conflict_actual_concurrent",
		"eventstore/known_version_moved_by_another_store",
		"hwm/held_cycle_retries_without_nudge", // skips: a counter row never holds the mark behind a transaction in flight
	)
	// The append in a transaction whose snapshot predates the winner's
	// commit fails at the counter row first ("update conflicts with
	// concurrent update", classified as a deadlock: transient), before the
	// stream's version is compared, so no ConcurrencyError comes back for
	// the test to read Actual from. Not yet investigated whether the core
	// should report the conflict here.
	excluded["eventstore/conflict_actual_read"] = "fails on Firebird 3: the stale-snapshot append is refused at the counter row (update conflicts with concurrent update, transient) before the version check, so no ConcurrencyError"
}
