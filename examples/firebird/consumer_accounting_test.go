package firebird_test

// The consumer/* tests (core/consumer) are accounted for here, in a file of
// their own. Every one runs on Firebird 3 with the quoted checkpoint
// statements of statements_consumer.go (POSITION is reserved there), the
// torture test with its three processes included.
func init() {
	passing = append(passing,
		"consumer/state_transitions",
		"consumer/names_refused_where_collation_merges",
		"consumer/names_case_insensitive_collation_refused", // skips: no case-insensitive collation to give a column here
		"consumer/checkpoint_monotonic_and_fenced_concurrent",
		"consumer/poll_before_rebuild_fenced",
		"consumer/restart_resumes_after_checkpoint",
		"consumer/per_key_order_concurrent_keys",
		"consumer/empty_stretch_saved_once_a_minute",
		"consumer/run_woken_by_mark_graceful_stop",
		"consumer/torture_kill9_three_processes",
	)
}

// Tests added with the durable-delivery and issue-12 work, each run on
// Firebird 3 (TIDEMARK_FIREBIRD_ALL=1).
func init() {
	passing = append(passing,
		"consumer/torture_one_consumer_three_processes_kill9",
		"hwm/cycle_cost",
	)
}

// eventstore/retry_tx_deadlock passed in two full runs on Firebird 3 and in
// a third gave up after 120 s ("RetryTx gave up: operation was cancelled"):
// excluded until the deadlock's detection there is understood.
func init() {
	// Seen once in a clean-clone CI run at load ~10: with the first instance
	// stopped (SIGSTOP) inside an apply, the taker waited in the purge of
	// lapsed instances (DELETE FROM PARTITION_INSTANCES …) for the test's
	// whole bound, so no takeover happened. The likely cause: the Go driver
	// commits an autocommit statement with a second round trip
	// (op_commit_retaining after the execute), so an instance stopped
	// between the two — right after its heartbeat's UPDATE — keeps its own
	// instance row locked until it resumes. Servers that commit autocommit
	// statements themselves have no such window.
	excluded["consumer/leases_paused_apply_fenced"] = "intermittent on Firebird 3: the taker's purge of lapsed instances waited for the stopped instance (likely its heartbeat's row, locked between the driver's execute and its client-side commit)"
	excluded["eventstore/retry_tx_deadlock"] = "intermittent on Firebird 3: one run of three gave up after 120 s waiting for the deadlock to be reported"
}

// The leased consumer runner's tests (issue 11 round 2), each run on
// Firebird 3 (TIDEMARK_FIREBIRD_ALL=1 TIDEMARK_FIREBIRD_ONLY=consumer/leases:
// 4 passed), the two multi-process ones included.
func init() {
	passing = append(passing,
		"consumer/leases_spread_kill9_three_processes",
		"consumer/leases_unsubscribe_deletes_rows",
		"consumer/leases_non_transactional_generation",
	)
}

// Group commit (issue 12 item 4), run on Firebird 3 (TIDEMARK_FIREBIRD_ONLY=
// "eventstore/group_commit hwm/interleaved": 8 passed).
func init() {
	passing = append(passing,
		"eventstore/group_commit_per_caller",
		"eventstore/group_commit_cancel_queued",
		"eventstore/group_commit_batches_form",
		"hwm/interleaved_group_commit_tail_reader",
	)
}

// A panic in a group-commit batch, run on Firebird 3 (TIDEMARK_FIREBIRD_ALL=1
// -run 'TestConformanceAll/eventstore/group_commit_panic': 1 passed).
func init() {
	passing = append(passing, "eventstore/group_commit_panic_answers_callers")
}

// Group commits of exact versions, run on Firebird 3 (TIDEMARK_FIREBIRD_ALL=1
// TIDEMARK_FIREBIRD_ONLY=eventstore/group_commit_exact: 1 passed, 1 skipped
// by the suite's reasoning: a counter row, so the versions are read).
func init() {
	passing = append(passing,
		"eventstore/group_commit_exact_conflicts",
		"eventstore/group_commit_exact_one_statement",
	)
}

// A group commit nudges with its committed end, run on Firebird 3
// (TIDEMARK_FIREBIRD_ALL=1 TIDEMARK_FIREBIRD_ONLY="eventstore/ hwm/ capture/":
// 49 passed, 8 skipped by the suite's own reasoning, as before it but this
// test).
func init() {
	passing = append(passing, "eventstore/group_commit_nudges_committed_end")
}

// Tests added with the rebuild fence, cooperative handover, lag, operator
// input, naming and committed-end work, run on Firebird 3
// (TIDEMARK_FIREBIRD_ALL=1 TIDEMARK_FIREBIRD_ONLY=<these names>: 10 passed,
// 1 skipped by the suite's own reasoning: Firebird declares no
// statement-size limit). The version read counts record reads in
// MON$RECORD_STATS: 224 for a stream of 10 events and for one of 100,000,
// through the DESCENDING index the DDL adds (1,600,176 without it).
func init() {
	passing = append(passing,
		"consumer/idle_caught_up_lag_zero_after_stop",
		"consumer/rebalance_joins_no_duplicates_three_processes",
		"consumer/rebuild_deletes_undelivered_and_skips",
		"consumer/rebuild_fences_straddling_poll_non_transactional",
		"consumer/rebuild_fences_straddling_poll_transactional",
		"eventstore/append_over_statement_limit_refused",
		"eventstore/stream_versions_read_flat",
		"hwm/interleaved_group_commit_tail_reader_streamed",
		"positions/committed_end_never_ahead_of_draws",
		"readonly/existing_creates_nothing",
		"schema/naming_first_character_refused",
	)
}

// The stop arriving mid-read, run on Firebird 3 (TIDEMARK_FIREBIRD_ALL=1
// TIDEMARK_FIREBIRD_ONLY=consumer/stop_during_read_saves_read_partitions: 1 passed).
func init() {
	passing = append(passing, "consumer/stop_during_read_saves_read_partitions")
	passing = append(passing, "consumer/poll_failed_after_last_wakeup_retried")
	passing = append(passing, "consumer/rebuild_fence_reads_bounded_by_window")
	passing = append(passing, "consumer/tx_batch_chunks_applied_once_poison_alone")
	passing = append(passing, "consumer/catch_up_reads_next_page_while_applying")
	passing = append(passing, "consumer/catch_up_reads_ahead_over_position_gaps")
	passing = append(passing, "consumer/replay_rebuilding_until_its_switch")
}

// The key-collation check, run on Firebird 3 (TIDEMARK_FIREBIRD_ALL=1
// TIDEMARK_FIREBIRD_ONLY=schema/case_insensitive_key_collation_refused):
// skipped by the suite's own reasoning (Firebird declares no such check).
func init() {
	passing = append(passing, "schema/case_insensitive_key_collation_refused")
}

// Consumers named as typed in the registry's errors, run on Firebird 3
// (TIDEMARK_FIREBIRD_ALL=1 TIDEMARK_FIREBIRD_ONLY=consumer/errors_name_consumers_as_typed).
func init() {
	passing = append(passing, "consumer/errors_name_consumers_as_typed", "consumer/source_names_differing_in_case_refused")
}

// The DSN parameters of a dialect (SQLite's), run on Firebird 3
// (TIDEMARK_FIREBIRD_ALL=1 TIDEMARK_FIREBIRD_ONLY=hwm/dsn_params_two_engines_no_busy):
// skipped by the suite's own reasoning (Firebird declares none).
func init() {
	passing = append(passing, "hwm/dsn_params_two_engines_no_busy")
}

// The cheaper poll's tests (one range read of every partition, checkpoints
// saved in one transaction), run on Firebird (TIDEMARK_FIREBIRD_ALL=1,
// TIDEMARK_FIREBIRD_ONLY naming them with poll_before_rebuild_fenced and
// stop_during_read_saves_read_partitions: 6 passed, 30 statements a poll).
func init() {
	passing = append(passing,
		"consumer/poll_reads_partitions_in_one_range",
		"consumer/partitions_apart_applied_once_in_order",
		"consumer/partitions_pages_apart_applied_once_in_order",
		"consumer/partitions_apart_transactional_applied_once",
	)
}

// Every reader that trusts a mark under group commit, and the capture
// topic's end read, run on Firebird 3 (TIDEMARK_FIREBIRD_ALL=1
// TIDEMARK_FIREBIRD_ONLY naming both).
func init() {
	passing = append(passing, "hwm/every_reader_gets_every_commit_group_commit", "positions/capture_end_never_ahead_of_draws")
}
