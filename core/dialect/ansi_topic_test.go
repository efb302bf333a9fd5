package dialect_test

import "github.com/tidemarkdb/tidemark/core/dialect"

// The capture topic's ANSI statements and their documented binds (the
// doc comments in statements_topic.go), added to documentedBinds.
func init() {
	for id, b := range map[dialect.StatementID][]string{
		dialect.TopicRange:          {"after", "upto", "limit"},
		dialect.TopicPartitionRange: {"partition", "after", "upto", "limit"},
		dialect.TopicBounds:         {"topic"},
		dialect.TopicSetStart:       {"topic", "start"},
		dialect.TopicDeleteThrough:  {"after", "through"},
		dialect.TopicFirstSince:     {"after", "cutoff"},
		dialect.TopicCount:          {"after", "upto"},
		dialect.TopicPositions:      {"after", "upto", "limit"},
		dialect.TopicCheckpoints:    {"topic"},
	} {
		documentedBinds[id] = b
	}
}
