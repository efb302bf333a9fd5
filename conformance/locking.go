package conformance

// lockingGivesUp are the tests whose expectation assumes an MVCC engine
// (a reader never waits for a writer), with what they assume. On an engine
// whose catalogue declares Locks.ReadersWaitForWriters they skip, with the
// declared fact as the reason; docs/writing-a-dialect.md ("Engines unlike
// PostgreSQL") lists what such an engine gives up.
var lockingGivesUp = map[string]string{
	"errors/deadlock":                                   "two transactions each lock one row and then wait for the other's; where a writer's lock also keeps readers and other writers off its table (HSQLDB LOCKS locks tables), the second transaction already waits at its first lock and no deadlock forms",
	"eventstore/retry_tx_deadlock":                      "two RetryTx transactions each lock one row of a table and then wait for the other's; where a writer's lock keeps others off its whole table (HSQLDB LOCKS), the second already waits at its first lock and no deadlock forms",
	"hwm/long_transaction_holds_mark":                   "the advancer reads the committed end while an append holds its transaction open, and that read waits for the append",
	"saga/starts_with_deadlines_do_not_lock_each_other": "the second start reads (loads) its instance while the first start's transaction holds its writes; where readers wait for writers (HSQLDB LOCKS locks whole tables) that read waits until the first commits",
	"consumer/leases_paused_apply_fenced":               "an instance stopped (SIGSTOP) inside an apply keeps the locks the apply took: the partition's ownership row, which the fence locks first, and the rows its handler wrote; where readers wait for writers (HSQLDB LOCKS locks whole tables) the takeover's read of the ownership, and any read of those rows, waits until the stopped one resumes, so no takeover can happen while it is stopped",
}

// adaptToLocking makes each test of lockingGivesUp skip on an engine whose
// readers wait for writers.
func adaptToLocking(tests []Test) []Test {
	for i, tc := range tests {
		assumes, ok := lockingGivesUp[tc.Name]
		if !ok {
			continue
		}
		run := tc.Run
		tests[i].Run = func(t T, env *Env) {
			if env.Catalogue.Locks.ReadersWaitForWriters {
				skipf(t, "%s declares that readers wait for writers (locks.readers_wait_for_writers): %s", env.Catalogue.Identity.Name, assumes)
			}
			run(t, env)
		}
	}
	return tests
}
