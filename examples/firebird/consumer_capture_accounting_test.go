package firebird_test

// The consumer/* tests of the capture topic as a consumer source and of
// the cross-process wake-up (conformance/consumer_capture_tests.go,
// consumer_wake_tests.go), in a file of their own so lists kept by other
// areas do not conflict.
func init() {
	passing = append(passing,
		"consumer/capture_applied_once_in_key_order",
		"consumer/capture_and_event_store_separate_checkpoints",
		"consumer/capture_missing_history_after_retention",
		"consumer/capture_copy_restore_exact",
		"consumer/woken_across_processes_by_notify", // skips: the catalogue declares no hwm.notify
	)
}
