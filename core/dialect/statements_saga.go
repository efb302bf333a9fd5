package dialect

// Sagas, on ${saga_instances_table} (one row per saga instance; a per-saga
// table is filled per call), ${saga_deadlines_table} (pending deadlines,
// unique per saga and name) and ${saga_deadline_locks_table} (the named
// lock row of the one deadline poller). Every time is computed and compared
// on the database clock: due_at and a lock's expiry are the clock plus a
// bound number of milliseconds (#{due_millis}, #{lease_millis}), a purge's
// age the clock plus #{cutoff_millis} (negative), completed_at the clock.
const (
	// SagaLoad returns (id, state_json, version, completed) of the instance
	// #{saga_type}, #{saga_id}; completed is 1 once completed_at is set.
	SagaLoad StatementID = "saga.load"
	// SagaInsert inserts a new instance: #{id}, #{saga_type}, #{saga_id},
	// #{state_json}, #{version}, completed_at NULL. A unique violation means
	// another apply started the same instance first.
	SagaInsert StatementID = "saga.insert"
	// SagaUpdate sets state_json = #{state_json} and version = version + 1
	// of the instance only while its version is #{version} and it is not
	// completed; the core reads the affected row count (0: a conflict).
	SagaUpdate StatementID = "saga.update"
	// SagaComplete is SagaUpdate that also sets completed_at to the
	// database clock.
	SagaComplete StatementID = "saga.complete"
	// SagaPurge deletes the completed instances of #{saga_type} whose
	// completed_at is before the database clock plus #{cutoff_millis} (a
	// negative number) and that have no row in ${saga_deadlines_table}.
	SagaPurge StatementID = "saga.purge"
	// SagaDeadlineSchedule inserts deadline #{id} #{name} of the instance
	// with due_at the database clock plus #{due_millis}, #{payload_json}
	// and #{metadata_json} (either may be NULL).
	SagaDeadlineSchedule StatementID = "saga.deadline_schedule"
	// SagaDeadlineCancel deletes deadline #{name} of the instance.
	SagaDeadlineCancel StatementID = "saga.deadline_cancel"
	// SagaDeadlineCancelAll deletes every deadline of the instance.
	SagaDeadlineCancelAll StatementID = "saga.deadline_cancel_all"
	// SagaDeadlinesDue returns (id, saga_type, saga_id, name, due_at,
	// payload_json, metadata_json) of the deadlines of #{saga_type} whose
	// due_at is not after the database clock, in due_at, id order, at most
	// #{limit} rows (the dialect's paging clause: the database stops, not
	// the driver).
	SagaDeadlinesDue StatementID = "saga.deadlines_due"
	// SagaDeadlineRetry sets the due_at of deadline #{id} to the database
	// clock plus #{due_millis}: a deadline whose handler failed is tried
	// again later, behind the deadlines already due.
	SagaDeadlineRetry StatementID = "saga.deadline_retry"
	// SagaDeadlineTake deletes deadline #{id}; the core reads the affected
	// row count (1: this transaction delivers it, 0: cancelled or taken).
	SagaDeadlineTake StatementID = "saga.deadline_take"
	// SagaDeadlinesPending returns (n), the number of deadlines of the
	// instance #{saga_type}, #{saga_id}.
	SagaDeadlinesPending StatementID = "saga.deadlines_pending"
	// SagaLockInsert inserts lock #{lock_name} for #{owner} expiring at the
	// database clock plus #{lease_millis}; a unique violation means the row
	// exists (then SagaLockAcquire).
	SagaLockInsert StatementID = "saga.lock_insert"
	// SagaLockAcquire takes or renews lock #{lock_name} for #{owner} when it
	// is already #{owner}'s or expired on the database clock, setting its
	// expiry to the clock plus #{lease_millis}; the core reads the affected
	// row count (1 = held).
	SagaLockAcquire StatementID = "saga.lock_acquire"
	// SagaLockRelease deletes lock #{lock_name} if #{owner} holds it.
	SagaLockRelease StatementID = "saga.lock_release"
	// SagaLockRead returns (owner, expires_at, live) of lock #{lock_name};
	// live is 1 while expires_at is not past on the database clock.
	SagaLockRead StatementID = "saga.lock_read"
	// SagaCounts returns (saga_type, n, completed) per saga type of the
	// instance table: its instances and how many of them completed.
	SagaCounts StatementID = "saga.counts"
	// SagaDeadlineCounts returns (saga_type, n, next_due, overdue) per saga
	// type: its pending deadlines, the earliest due_at, and how many are due
	// on the database clock (still there: not delivered yet).
	SagaDeadlineCounts StatementID = "saga.deadline_counts"
	// SagaList returns (id, saga_type, saga_id, version, completed) of
	// the instances of the table, by saga_type and saga_id, at most
	// #{limit} rows (the dialect's paging clause).
	SagaList StatementID = "saga.list"
	// SagaListType is SagaList of the instances of #{saga_type} only.
	SagaListType StatementID = "saga.list_type"
)

var (
	sagaInstances = []string{"saga_instances_table"}
	sagaDeadlines = []string{"saga_deadlines_table"}
	sagaLocks     = []string{"saga_deadline_locks_table"}
	sagaKey       = []string{"saga_type", "saga_id"}
)

var sagaStatements = []StatementSpec{
	{ID: SagaLoad, Binds: sagaKey, Tables: sagaInstances, Returns: []string{"id", "state_json", "version", "completed"}},
	{ID: SagaInsert, Binds: []string{"id", "saga_type", "saga_id", "state_json", "version"}, Tables: sagaInstances},
	{ID: SagaUpdate, Binds: []string{"state_json", "saga_type", "saga_id", "version"}, Tables: sagaInstances},
	{ID: SagaComplete, Binds: []string{"state_json", "saga_type", "saga_id", "version"}, Tables: sagaInstances},
	{ID: SagaPurge, Binds: []string{"saga_type", "cutoff_millis"}, Tables: []string{"saga_instances_table", "saga_deadlines_table"}},
	{ID: SagaDeadlineSchedule, Binds: []string{"id", "saga_type", "saga_id", "name", "due_millis", "payload_json", "metadata_json"}, Tables: sagaDeadlines},
	{ID: SagaDeadlineCancel, Binds: []string{"saga_type", "saga_id", "name"}, Tables: sagaDeadlines},
	{ID: SagaDeadlineCancelAll, Binds: sagaKey, Tables: sagaDeadlines},
	{ID: SagaDeadlinesDue, Binds: []string{"saga_type", "limit"}, Tables: sagaDeadlines,
		Returns: []string{"id", "saga_type", "saga_id", "name", "due_at", "payload_json", "metadata_json"}},
	{ID: SagaDeadlineRetry, Binds: []string{"id", "due_millis"}, Tables: sagaDeadlines},
	{ID: SagaDeadlineTake, Binds: []string{"id"}, Tables: sagaDeadlines},
	{ID: SagaDeadlinesPending, Binds: sagaKey, Tables: sagaDeadlines, Returns: []string{"n"}},
	{ID: SagaLockInsert, Binds: []string{"lock_name", "owner", "lease_millis"}, Tables: sagaLocks},
	{ID: SagaLockAcquire, Binds: []string{"lock_name", "owner", "lease_millis"}, Tables: sagaLocks},
	{ID: SagaLockRelease, Binds: []string{"lock_name", "owner"}, Tables: sagaLocks},
	{ID: SagaLockRead, Binds: []string{"lock_name"}, Tables: sagaLocks, Returns: []string{"owner", "expires_at", "live"}},
	{ID: SagaCounts, Tables: sagaInstances, Returns: []string{"saga_type", "n", "completed_count"}},
	{ID: SagaDeadlineCounts, Tables: sagaDeadlines, Returns: []string{"saga_type", "n", "next_due", "overdue"}},
	{ID: SagaList, Binds: []string{"limit"}, Tables: sagaInstances, Returns: []string{"id", "saga_type", "saga_id", "version", "completed"}},
	{ID: SagaListType, Binds: []string{"saga_type", "limit"}, Tables: sagaInstances, Returns: []string{"id", "saga_type", "saga_id", "version", "completed"}},
}

// EVENT_PUBLICATION_METADATA, ${event_publication_metadata_table}: one row
// per publication, its metadata and (once completed) the completion date
// the application gives.
const (
	// PublicationInsert inserts #{publication_id} with #{metadata_text}.
	PublicationInsert StatementID = "publication.insert"
	// PublicationUpdate sets METADATA = #{metadata_text} of #{publication_id}.
	PublicationUpdate StatementID = "publication.update"
	// PublicationGet returns (metadata_text, completion_date) of
	// #{publication_id}; completion_date is NULL until completed.
	PublicationGet StatementID = "publication.get"
	// PublicationComplete sets COMPLETION_DATE = #{completion_date} of
	// #{publication_id}.
	PublicationComplete StatementID = "publication.complete"
	// PublicationPurge deletes the rows completed before #{cutoff}.
	PublicationPurge StatementID = "publication.purge"
	// PublicationDelete deletes the row of #{publication_id}.
	PublicationDelete StatementID = "publication.delete"
)

var publicationTable = []string{"event_publication_metadata_table"}

var publicationStatements = []StatementSpec{
	{ID: PublicationInsert, Binds: []string{"publication_id", "metadata_text"}, Tables: publicationTable},
	{ID: PublicationUpdate, Binds: []string{"publication_id", "metadata_text"}, Tables: publicationTable},
	{ID: PublicationGet, Binds: []string{"publication_id"}, Tables: publicationTable, Returns: []string{"metadata_text", "completion_date"}},
	{ID: PublicationComplete, Binds: []string{"publication_id", "completion_date"}, Tables: publicationTable},
	{ID: PublicationPurge, Binds: []string{"cutoff"}, Tables: publicationTable},
	{ID: PublicationDelete, Binds: []string{"publication_id"}, Tables: publicationTable},
}
