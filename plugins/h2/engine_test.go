package h2

import (
	"fmt"
	"testing"

	"github.com/tidemarkdb/tidemark/jdbcbridge"
	"github.com/tidemarkdb/tidemark/plugins/internal/enginetest"
)

// These tests run the catalogue on a real H2 through the JDBC bridge; they
// skip when Java or the H2 jar is missing.

// realEngine is an in-memory H2 database with the dialect's lock timeout.
var realEngine = enginetest.Engine{
	Name:     "H2",
	Jar:      jdbcbridge.H2Jar,
	DBPrefix: "h2test",
	URL: func(name string) string {
		return fmt.Sprintf("jdbc:h2:mem:%s;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=%d", name, LockTimeoutMillis)
	},
	User:        "sa",
	Catalogue:   Catalogue,
	LockTimeout: "SET LOCK_TIMEOUT 100",
}

func TestMain(m *testing.M) { enginetest.Main(m) }

func TestDDLIdempotentOnH2(t *testing.T) { enginetest.DDLIdempotent(t, realEngine) }

func TestPositionAllocateHoldsTheCounter(t *testing.T) {
	enginetest.PositionAllocateHoldsTheCounter(t, realEngine)
}

func TestErrorRules(t *testing.T) { enginetest.ErrorRules(t, realEngine) }
