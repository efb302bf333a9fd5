package dialect_test

import (
	"os/exec"
	"strings"
	"testing"
)

// hotPath are the packages that run statements on the user's database; they
// import the contract and must not link the plugin transport.
var hotPath = []string{
	"github.com/tidemarkdb/tidemark/core/dialect",
	"github.com/tidemarkdb/tidemark/core/engine",
	"github.com/tidemarkdb/tidemark/core/eventstore",
	"github.com/tidemarkdb/tidemark/core/consumer",
	"github.com/tidemarkdb/tidemark/core/hwm",
	"github.com/tidemarkdb/tidemark/core/topic",
	"github.com/tidemarkdb/tidemark/core/lease",
	"github.com/tidemarkdb/tidemark/core/schema",
	"github.com/tidemarkdb/tidemark/core/log",
	"github.com/tidemarkdb/tidemark/core/log/position",
	"github.com/tidemarkdb/tidemark/core/stmt",
	"github.com/tidemarkdb/tidemark/core/saga",
	"github.com/tidemarkdb/tidemark/core/publication",
}

// transportPrefixes are import-path prefixes of the plugin transport.
var transportPrefixes = []string{
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
	"github.com/hashicorp/go-plugin",
	"github.com/tidemarkdb/tidemark/core/dialect/plugin",
}

// TestHotPathLinksNoTransport asks the go tool for the dependencies of the
// hot-path packages (tests excluded) and refuses any transport package.
func TestHotPathLinksNoTransport(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH to list dependencies: %v", err)
	}
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, hotPath...)...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps: %v\n%s", err, stderr)
	}
	var bad []string
	for _, dep := range strings.Fields(string(out)) {
		for _, p := range transportPrefixes {
			if dep == p || strings.HasPrefix(dep, p+"/") {
				bad = append(bad, dep)
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("the hot path links %d transport packages, first: %s", len(bad), strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}
