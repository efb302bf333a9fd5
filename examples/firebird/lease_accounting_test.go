package firebird_test

// The lease/* tests (core/lease) are accounted for here, in a file of their
// own, with the statements of statements_lease.go.
func init() {
	passing = append(passing,
		"lease/claim_fence_stop",
		"lease/fence_holds_takeover",
		"lease/heartbeat_one_statement",
		"lease/takeover_after_kill",
		"lease/paused_owner_fenced",
		"lease/clock_skew",
		"lease/operator_status",
	)
}
