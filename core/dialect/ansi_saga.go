package dialect

import "strings"

// ansiSagaStatements are the saga statements in ANSI SQL on ANSI's clock
// (SagaStatements with CURRENT_TIMESTAMP and its interval arithmetic).
func ansiSagaStatements() map[StatementID]string {
	return SagaStatements(ansiNow, ansiLeaseExpiry)
}

// SagaStatements returns every saga and publication-metadata statement in
// ANSI's text with the engine's clock expression now and its lease expiry
// (now plus #{lease_millis} milliseconds, the form LeaseStatements and
// PartitionLeaseStatements take) put in; the expiry also computes due_at
// (#{due_millis}) and a purge's cutoff (#{cutoff_millis}, negative), so it
// must accept a negative number. A dialect whose clock or date arithmetic
// differs merges the result after ANSI's statements:
//
//	maps.Copy(st, dialect.SagaStatements(now, expiry))
//
// SagaDeadlinesDue, SagaList and SagaListType end in ANSI's paging clause
// (FETCH FIRST #{limit} ROWS ONLY): an engine that pages otherwise rewrites
// them after the merge (LimitPaging does for LIMIT engines).
func SagaStatements(now, expiry string) map[StatementID]string {
	plus := func(bind string) string { return strings.ReplaceAll(expiry, "#{lease_millis}", "#{"+bind+"}") }
	const key = ` WHERE saga_type = #{saga_type} AND saga_id = #{saga_id}`
	const inst, dl, locks = `${saga_instances_table}`, `${saga_deadlines_table}`, `${saga_deadline_locks_table}`
	const pub = `${event_publication_metadata_table}`
	const list = `SELECT id, saga_type, saga_id, version, CASE WHEN completed_at IS NULL THEN 0 ELSE 1 END FROM ` + inst
	return map[StatementID]string{
		SagaLoad:     `SELECT id, state_json, version, CASE WHEN completed_at IS NULL THEN 0 ELSE 1 END FROM ` + inst + key,
		SagaInsert:   `INSERT INTO ` + inst + ` (id, saga_type, saga_id, state_json, version) VALUES (#{id}, #{saga_type}, #{saga_id}, #{state_json}, #{version})`,
		SagaUpdate:   `UPDATE ` + inst + ` SET state_json = #{state_json}, version = version + 1` + key + ` AND version = #{version} AND completed_at IS NULL`,
		SagaComplete: `UPDATE ` + inst + ` SET state_json = #{state_json}, version = version + 1, completed_at = ` + now + key + ` AND version = #{version} AND completed_at IS NULL`,
		SagaPurge: `DELETE FROM ` + inst + ` WHERE saga_type = #{saga_type} AND completed_at IS NOT NULL AND completed_at < ` + plus("cutoff_millis") +
			` AND NOT EXISTS (SELECT 1 FROM ` + dl + ` WHERE ` + dl + `.saga_type = ` + inst + `.saga_type AND ` + dl + `.saga_id = ` + inst + `.saga_id)`,
		SagaDeadlineSchedule: `INSERT INTO ` + dl + ` (id, saga_type, saga_id, name, due_at, payload_json, metadata_json) ` +
			`VALUES (#{id}, #{saga_type}, #{saga_id}, #{name}, ` + plus("due_millis") + `, #{payload_json}, #{metadata_json})`,
		SagaDeadlineCancel:    `DELETE FROM ` + dl + key + ` AND name = #{name}`,
		SagaDeadlineCancelAll: `DELETE FROM ` + dl + key,
		SagaDeadlinesDue: `SELECT id, saga_type, saga_id, name, due_at, payload_json, metadata_json FROM ` + dl +
			` WHERE saga_type = #{saga_type} AND due_at <= ` + now + ` ORDER BY due_at, id FETCH FIRST #{limit} ROWS ONLY`,
		SagaDeadlineRetry:    `UPDATE ` + dl + ` SET due_at = ` + plus("due_millis") + ` WHERE id = #{id}`,
		SagaDeadlineTake:     `DELETE FROM ` + dl + ` WHERE id = #{id}`,
		SagaDeadlinesPending: `SELECT COUNT(*) FROM ` + dl + key,
		SagaLockInsert:       `INSERT INTO ` + locks + ` (lock_name, owner, expires_at) VALUES (#{lock_name}, #{owner}, ` + expiry + `)`,
		SagaLockAcquire: `UPDATE ` + locks + ` SET owner = #{owner}, expires_at = ` + expiry +
			` WHERE lock_name = #{lock_name} AND (owner = #{owner} OR expires_at < ` + now + `)`,
		SagaLockRelease: `DELETE FROM ` + locks + ` WHERE lock_name = #{lock_name} AND owner = #{owner}`,
		SagaLockRead: `SELECT owner, expires_at, CASE WHEN expires_at >= ` + now + ` THEN 1 ELSE 0 END FROM ` + locks +
			` WHERE lock_name = #{lock_name}`,
		SagaCounts:         `SELECT saga_type, COUNT(*), COUNT(completed_at) FROM ` + inst + ` GROUP BY saga_type`,
		SagaDeadlineCounts: `SELECT saga_type, COUNT(*), MIN(due_at), COUNT(CASE WHEN due_at <= ` + now + ` THEN 1 END) FROM ` + dl + ` GROUP BY saga_type`,
		SagaList:           list + ` ORDER BY saga_type, saga_id FETCH FIRST #{limit} ROWS ONLY`,
		SagaListType:       list + ` WHERE saga_type = #{saga_type} ORDER BY saga_type, saga_id FETCH FIRST #{limit} ROWS ONLY`,

		PublicationInsert:   `INSERT INTO ` + pub + ` (PUBLICATION_ID, METADATA) VALUES (#{publication_id}, #{metadata_text})`,
		PublicationUpdate:   `UPDATE ` + pub + ` SET METADATA = #{metadata_text} WHERE PUBLICATION_ID = #{publication_id}`,
		PublicationGet:      `SELECT METADATA, COMPLETION_DATE FROM ` + pub + ` WHERE PUBLICATION_ID = #{publication_id}`,
		PublicationComplete: `UPDATE ` + pub + ` SET COMPLETION_DATE = #{completion_date} WHERE PUBLICATION_ID = #{publication_id}`,
		PublicationPurge:    `DELETE FROM ` + pub + ` WHERE COMPLETION_DATE IS NOT NULL AND COMPLETION_DATE < #{cutoff}`,
		PublicationDelete:   `DELETE FROM ` + pub + ` WHERE PUBLICATION_ID = #{publication_id}`,
	}
}
