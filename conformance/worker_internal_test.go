package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

func TestErrorKind(t *testing.T) {
	pm := &engine.PartitionMismatchError{Table: "P", Persisted: 8, Configured: 16}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("plain"), ""},
		{pm, "*engine.PartitionMismatchError"},
		{fmt.Errorf("opening: %w", pm), "*engine.PartitionMismatchError"},
		{errors.Join(errors.New("x"), &schema.NameConflictError{}), "*schema.NameConflictError"},
	} {
		if got := errorKind(c.err); got != c.want {
			t.Errorf("errorKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestRunWorkerRefusesBadJobs(t *testing.T) {
	barrier := bufio.NewReader(strings.NewReader("go\n"))
	if r := runWorker("{", barrier); r.OK || !strings.Contains(r.Error, "worker job") {
		t.Errorf("malformed job: %+v", r)
	}
	if r := runWorker(`{"action":"nope"}`, barrier); r.OK || !strings.Contains(r.Error, "unknown worker action") {
		t.Errorf("unknown action: %+v", r)
	}
}
