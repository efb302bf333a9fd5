package sqlserver

import (
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// topicStatements puts SQL Server's paging into the capture topic's reads
// and the saga reads (ORDER BY … OFFSET 0 ROWS FETCH NEXT, as the event
// reads): the ANSI FETCH FIRST without OFFSET does not parse there.
func topicStatements(st map[dialect.StatementID]string) {
	for _, id := range []dialect.StatementID{dialect.TopicRange, dialect.TopicPartitionRange, dialect.TopicPositions, dialect.RMTopicRange, dialect.RMTopicPartitionRange,
		dialect.SagaDeadlinesDue, dialect.SagaList, dialect.SagaListType} {
		st[id] = strings.Replace(st[id], ` FETCH FIRST #{limit} ROWS ONLY`, ` OFFSET 0 ROWS FETCH NEXT #{limit} ROWS ONLY`, 1)
	}
}
