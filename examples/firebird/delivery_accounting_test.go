package firebird_test

// The consumer/delivery/* tests (undelivered messages, retries, error
// policies, skips, missing history) are accounted for here, in a file of
// their own: every one passes on Firebird 3 with the ANSI statements of
// core/dialect/ansi_undelivered.go (no reserved word among their columns).
func init() {
	passing = append(passing,
		"consumer/delivery/failed_retried_when_due_waiting_in_order",
		"consumer/delivery/budget_survives_restart_and_instance_move",
		"consumer/delivery/budget_moves_to_another_process",
		"consumer/delivery/transient_errors_spend_no_budget",
		"consumer/delivery/error_policies",
		"consumer/delivery/failure_reason_cut_copy_byte_exact",
		"consumer/delivery/skip_honoured_by_second_instance_and_cleaned",
		"consumer/delivery/missing_history_marks_and_halts",
	)
}
