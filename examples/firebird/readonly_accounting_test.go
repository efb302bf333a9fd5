package firebird_test

// The readonly/* tests (read-only engines, docs/deployments.md) are
// accounted for here, in a file of their own: every one runs on Firebird 3.
func init() {
	passing = append(passing,
		"readonly/reads_and_follows",
		"readonly/writes_refused",
		"readonly/empty_database_refused",
		"readonly/partition_count",
	)
}
