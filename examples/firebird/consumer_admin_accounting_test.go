package firebird_test

// The consumer/admin_* tests (the operator controls, core/consumer/admin*.go)
// are accounted for here, in a file of their own. Every one runs on
// Firebird 3: the operator's statements name no reserved column (the
// checkpoint's position is read through the quoted checkpoint.read).
func init() {
	passing = append(passing,
		"consumer/admin_status_lag_and_counts",
		"consumer/admin_pause_resume_fresh_budget",
		"consumer/registry_resume_fresh_budget",
		"consumer/admin_resume_past_records_skips",
		"consumer/admin_retry_dead_letters",
		"consumer/admin_delete_dead_letters",
		"consumer/admin_skip",
		"consumer/admin_unsubscribe_cleanup",
		"consumer/admin_input_refused_before_sql",
		// The operator console's pages, /metrics and a retry over the
		// same operator (internal/console).
		"consumer/console_pages_metrics_and_retry",
	)
}
