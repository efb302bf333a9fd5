package firebird_test

// Follow's streamed pages (issue 12 item 5), accounted for in a file of
// their own: each passed on Firebird 3 (TIDEMARK_FIREBIRD_ALL=1).
func init() {
	passing = append(passing,
		"eventstore/follow_streams_rows",
		"eventstore/follow_buffered",
		"hwm/interleaved_commits_tail_reader_streamed",
		"hwm/interleaved_autocommit_tail_reader_streamed",
		// A stop between a page and its commit, transient errors retried.
		"eventstore/follow_streams_rows_stop_before_commit",
		"eventstore/follow_buffered_stop_before_commit",
		"eventstore/follow_streams_rows_transient_retried",
		"eventstore/follow_buffered_transient_retried",
		// The topic's Follow is the log's: transient errors retried there too.
		"capture/follow_transient_retried",
	)
}
