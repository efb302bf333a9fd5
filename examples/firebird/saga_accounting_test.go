package firebird_test

// The saga/* tests (core/saga, core/publication), each run on Firebird 3
// (TIDEMARK_FIREBIRD_ALL=1 TIDEMARK_FIREBIRD_ONLY=saga/), with the saga
// statements of dialect.SagaStatements on DATEADD.
func init() {
	passing = append(passing,
		"saga/start_correlate_complete_through_consumer",
		"saga/concurrent_updates_lose_nothing",
		"saga/starts_with_deadlines_do_not_lock_each_other",
		"saga/reads_during_concurrent_updates",
		"saga/random_initial_version_never_repeats",
		"saga/declarations_refused_before_any_sql",
		"saga/purge_keeps_pending_deadline_removes_old_completed",
		"saga/deadline_due_by_database_clock",
		"saga/deadline_reschedule_replaces_complete_cancels",
		"saga/cancel_races_due_deadline_one_wins",
		"saga/deadline_fires_once_three_processes",
		"saga/deadline_holder_killed_mid_delivery_another_delivers",
		"saga/publication_metadata_round_trip_and_purge",
		"saga/operator_status_list_without_declaration",
		"saga/deadline_lock_one_holder_takeover_own_lease",
		"saga/scheduled_purge_by_lease_holder",
		"saga/deadline_due_across_session_time_zones", // skips: Firebird 3 has no session time zone
		"saga/failing_deadline_does_not_starve_others",
		"saga/due_read_bounded_by_batch",
		"saga/deadline_metadata_restored",
		"saga/due_read_merges_saga_types_in_due_order",
		"saga/foreign_overdue_deadlines_reported_kept",
		"saga/deadline_once_without_lease_three_processes",
		"saga/conflict_and_concurrent_start_retried",
		"saga/codec_init_cancel_all",
		"saga/publication_concurrent_put_and_delete",
		"schema/saga_own_table_prefixed",
	)
}
