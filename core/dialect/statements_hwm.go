package dialect

// The high-water mark, on ${high_water_mark_store_table}: one row per topic.
// Lease statements compute expiry on the database clock from #{lease_millis}.
const (
	// HWMSeed inserts the row of #{topic} at mark 0 unless it exists.
	HWMSeed StatementID = "hwm.seed"
	// HWMRead returns (high_water_mark, pending_end, pending_horizon,
	// lease_owner) of #{topic}.
	HWMRead StatementID = "hwm.read"
	// HWMAcquire takes or renews the lease of #{topic} for #{owner} when it
	// is free, already #{owner}'s, or expired; the core reads the affected
	// row count (1 = held).
	HWMAcquire StatementID = "hwm.acquire"
	// HWMRelease frees the lease of #{topic} if #{owner} holds it.
	HWMRelease StatementID = "hwm.release"
	// HWMAdvance sets high_water_mark = #{mark} and clears pending_end and
	// pending_horizon for #{topic} only while #{owner} holds an unexpired
	// lease and the mark is below #{mark}.
	HWMAdvance StatementID = "hwm.advance"
	// HWMSetPending (sequence) records #{pending_end} and #{pending_horizon}
	// for #{topic} while #{owner} holds an unexpired lease.
	HWMSetPending StatementID = "hwm.set_pending"
	// HWMClearPending (sequence) clears pending_end and pending_horizon of
	// #{topic} while #{owner} holds an unexpired lease.
	HWMClearPending StatementID = "hwm.clear_pending"
	// HWMNotify, optional, tells other processes the mark of #{topic} moved
	// (e.g. pg_notify). Run after the advancing transaction commits.
	HWMNotify StatementID = "hwm.notify"
	// HWMAdvanceNotify, optional, is HWMAdvance and HWMNotify in one
	// statement: it moves the mark under the same conditions and notifies
	// only when it did, returning one row (one column, any value) per row
	// it moved and none otherwise. When declared the core runs it instead
	// of the two (one round trip per move instead of two).
	HWMAdvanceNotify StatementID = "hwm.advance_notify"
	// DatabaseNow returns one column, the database clock (for diagnostics
	// and lease tests).
	DatabaseNow StatementID = "clock.now"
)

// hwmBinds are what the advancer passes to every lease statement.
var hwmBinds = []string{"topic", "owner", "lease_millis"}

var hwmTable = []string{"high_water_mark_store_table"}

var hwmStatements = []StatementSpec{
	{ID: HWMSeed, Binds: []string{"topic"}, Tables: hwmTable},
	{ID: HWMRead, Binds: []string{"topic"}, Tables: hwmTable, Returns: []string{"high_water_mark", "pending_end", "pending_horizon", "lease_owner"}},
	{ID: HWMAcquire, Binds: hwmBinds, Tables: hwmTable},
	{ID: HWMRelease, Binds: []string{"topic", "owner"}, Tables: hwmTable},
	{ID: HWMAdvance, Binds: append([]string{"mark"}, hwmBinds...), Tables: hwmTable},
	{ID: HWMSetPending, Strategy: SequenceXIDHorizon, Binds: append([]string{"pending_end", "pending_horizon"}, hwmBinds...), Tables: hwmTable},
	{ID: HWMClearPending, Strategy: SequenceXIDHorizon, Binds: hwmBinds, Tables: hwmTable},
	{ID: HWMNotify, Optional: true, Binds: hwmBinds, Tables: hwmTable},
	{ID: HWMAdvanceNotify, Optional: true, Binds: append([]string{"mark"}, hwmBinds...), Tables: hwmTable, Returns: []string{"notified"}},
	{ID: DatabaseNow, Returns: []string{"now"}},
}
