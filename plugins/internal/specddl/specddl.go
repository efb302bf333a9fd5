// Package specddl holds the DDL template text that the spec's PostgreSQL, H2
// and HSQLDB blocks, and Tidemark's SQLite mapping of them, share verbatim.
//
// Every statement is a template: table names are ${placeholders} and derived
// index and constraint names are built from them, exactly as the dialect
// plugins hand them to dialect.Scripts. A plugin composes its ddl() map from
// CommonScripts, the shared statements below, and the statements that are its
// own (column types, defaults, position objects). The text here must stay
// byte-for-byte what the plugins' golden files hold.
package specddl

import (
	"fmt"
	"slices"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Merge returns one map holding the scripts of every part. The parts must not
// name the same script twice; a duplicate is a programming error and panics.
func Merge(parts ...map[string][]string) map[string][]string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make(map[string][]string, n)
	for _, p := range parts {
		for k, v := range p {
			if _, dup := out[k]; dup {
				panic(fmt.Sprintf("specddl: script %q defined twice", k))
			}
			out[k] = v
		}
	}
	return out
}

// CommonScripts returns the scripts whose every statement is the same on
// PostgreSQL, H2, HSQLDB and SQLite, keyed by script name. Each call returns
// fresh slices.
func CommonScripts() map[string][]string {
	out := make(map[string][]string, len(commonScripts))
	for k, v := range commonScripts {
		out[k] = slices.Clone(v)
	}
	return out
}

// commonScripts is what CommonScripts copies.
var commonScripts = map[string][]string{
	dialect.ScriptPartitionMetadata:   {partitionMetadataTable},
	dialect.ScriptTopicCompaction:     {topicCompactionTable},
	dialect.ScriptConsumerCheckpoints: {consumersTable, consumerCheckpointsTable},
	dialect.ScriptConsumerSkipped:     {consumerSkippedMessagesTable, consumerSkippedMessagesPositionIndex},
	dialect.ScriptPartitionMembers:    {partitionMembersTable, partitionMembersInstanceIndex},
	dialect.ScriptReadModelEpochs:     {readModelEpochsTable},
	dialect.ScriptSagaDeadlineLocks:   {sagaDeadlineLocksTable},
}

// CounterTable returns the CREATE TABLE of a single-row position counter
// named by the placeholder (e.g. "event_store_global_position_table"), as
// H2, HSQLDB and SQLite declare it.
func CounterTable(placeholder string) string {
	return `CREATE TABLE IF NOT EXISTS ${` + placeholder + `} (
    id  TINYINT NOT NULL PRIMARY KEY,
    val BIGINT  NOT NULL
)`
}

// CounterSeedMerge returns the MERGE that seeds the counter table named by
// the placeholder with (1, 0) and never overwrites an existing row, as H2 and
// HSQLDB write it.
func CounterSeedMerge(placeholder string) string {
	return `MERGE INTO ${` + placeholder + `} t
    USING (VALUES (1, 0)) AS s (id, val) ON t.id = s.id
    WHEN NOT MATCHED THEN INSERT (id, val) VALUES (s.id, s.val)`
}
