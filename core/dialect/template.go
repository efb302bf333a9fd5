package dialect

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	identPlaceholder = regexp.MustCompile(`\$\{([a-z_]+)\}`)
	bindPlaceholder  = regexp.MustCompile(`#\{([a-z_]+)\}`)
)

// Placeholders returns the distinct ${…} identifier placeholders of a
// template, sorted.
func Placeholders(template string) []string {
	seen := map[string]bool{}
	for _, m := range identPlaceholder.FindAllStringSubmatch(template, -1) {
		seen[m[1]] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Fill replaces every ${name} of template with names[name]. A placeholder
// without a value is an error naming it: the core never sends a template with
// holes to a database. Values must already be validated identifiers (or, for
// ${query_columns}, column definitions the core built from validated names).
func Fill(template string, names map[string]string) (string, error) {
	var missing []string
	out := identPlaceholder.ReplaceAllStringFunc(template, func(m string) string {
		key := m[2 : len(m)-1]
		v, ok := names[key]
		if !ok {
			missing = append(missing, key)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("template placeholder ${%s} has no value", strings.Join(missing, "}, ${"))
	}
	return out, nil
}

// Compiled is a statement ready to run: SQL in the driver's placeholder style
// and the parameter names to bind, in order.
type Compiled struct {
	SQL    string
	Params []string
}

// Compile turns the #{name} binds of a filled statement into the dialect's
// placeholders and records the bind order.
func Compile(filled string, style PlaceholderStyle) Compiled {
	var params []string
	sql := bindPlaceholder.ReplaceAllStringFunc(filled, func(m string) string {
		params = append(params, m[2:len(m)-1])
		return placeholder(style, len(params))
	})
	return Compiled{SQL: sql, Params: params}
}

// placeholder renders the n-th (1-based) bind parameter in a style.
func placeholder(style PlaceholderStyle, n int) string {
	switch style {
	case PlaceholderDollar:
		return "$" + strconv.Itoa(n)
	case PlaceholderAtP:
		return "@p" + strconv.Itoa(n)
	case PlaceholderColon:
		return ":" + strconv.Itoa(n)
	default:
		return "?"
	}
}

// Args orders named values for a compiled statement. A parameter without a
// value is an error: it names the statement's parameter.
func (c Compiled) Args(values map[string]any) ([]any, error) {
	args := make([]any, len(c.Params))
	for i, p := range c.Params {
		v, ok := values[p]
		if !ok {
			return nil, fmt.Errorf("statement parameter #{%s} has no value", p)
		}
		args[i] = v
	}
	return args, nil
}

// DefaultNames are the spec's default table names, keyed by placeholder.
// A placeholder's value is always the table's full name, prefix included.
var DefaultNames = map[string]string{
	"consumers_table":                     "CONSUMERS",
	"consumer_checkpoints_table":          "CONSUMER_CHECKPOINTS",
	"consumer_undelivered_messages_table": "CONSUMER_UNDELIVERED_MESSAGES",
	"consumer_skipped_messages_table":     "CONSUMER_SKIPPED_MESSAGES",
	"partition_ownership_table":           "PARTITION_OWNERSHIP",
	"partition_members_table":             "PARTITION_MEMBERS",
	"partition_instances_table":           "PARTITION_INSTANCES",
	"event_capture_records_table":         "EVENT_CAPTURE_RECORDS",
	"event_capture_global_position_table": "EVENT_CAPTURE_GLOBAL_POSITION",
	"high_water_mark_store_table":         "HIGH_WATER_MARK_STORE",
	"partition_metadata_table":            "PARTITION_METADATA",
	"event_store_table":                   "EVENT_STORE",
	"aggregate_snapshots_table":           "AGGREGATE_SNAPSHOTS",
	"event_store_global_position_table":   "EVENT_STORE_GLOBAL_POSITION",
	"read_model_capture_records_table":    "READ_MODEL_CAPTURE_RECORDS",
	"read_model_capture_positions_table":  "READ_MODEL_CAPTURE_POSITIONS",
	"topic_compaction_table":              "TOPIC_COMPACTION",
	"read_model_epochs_table":             "READ_MODEL_EPOCHS",
	"saga_instances_table":                "SAGA_INSTANCES",
	"saga_deadlines_table":                "SAGA_DEADLINES",
	"saga_deadline_locks_table":           "SAGA_DEADLINE_LOCKS",
	"event_publication_metadata_table":    "EVENT_PUBLICATION_METADATA",
}

// PlaceholderArea tells which area's prefix and schema switch a shared table
// placeholder belongs to.
var PlaceholderArea = map[string]Area{
	"consumers_table":                     AreaMessaging,
	"consumer_checkpoints_table":          AreaMessaging,
	"consumer_undelivered_messages_table": AreaMessaging,
	"consumer_skipped_messages_table":     AreaMessaging,
	"partition_ownership_table":           AreaMessaging,
	"partition_members_table":             AreaMessaging,
	"partition_instances_table":           AreaMessaging,
	"event_capture_records_table":         AreaMessaging,
	"event_capture_global_position_table": AreaMessaging,
	"high_water_mark_store_table":         AreaMessaging,
	"read_model_capture_records_table":    AreaMessaging,
	"read_model_capture_positions_table":  AreaMessaging,
	"topic_compaction_table":              AreaMessaging,
	"partition_metadata_table":            AreaPartitioning,
	"event_store_table":                   AreaEventSourcing,
	"aggregate_snapshots_table":           AreaEventSourcing,
	"event_store_global_position_table":   AreaEventSourcing,
	"read_model_epochs_table":             AreaCQRS,
	"saga_instances_table":                AreaSaga,
	"saga_deadlines_table":                AreaSaga,
	"saga_deadline_locks_table":           AreaSaga,
	"event_publication_metadata_table":    AreaPublication,
}
