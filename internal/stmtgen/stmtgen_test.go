package stmtgen

import (
	"strings"
	"testing"
)

// TestUntypedNameFails: a bind without a Go type stops the generator.
func TestUntypedNameFails(t *testing.T) {
	saved := types["topic"]
	delete(types, "topic")
	defer func() { types["topic"] = saved }()
	_, err := Generate("../../core/dialect")
	if err == nil || !strings.Contains(err.Error(), "#{topic} has no Go type") {
		t.Fatalf("got %v, want a refusal naming #{topic}", err)
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{"consumer_id": "ConsumerID", "id_a": "IDA", "event_store_table": "EventStoreTable", "xid": "XID"} {
		if got := goName(in); got != want {
			t.Errorf("goName(%q) = %q, want %q", in, got, want)
		}
	}
}
