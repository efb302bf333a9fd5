package hsqldb

import (
	"testing"

	"github.com/tidemarkdb/tidemark/jdbcbridge"
	"github.com/tidemarkdb/tidemark/plugins/internal/enginetest"
)

// These tests run the catalogue on a real HSQLDB (MVCC mode) through the JDBC
// bridge; they skip when Java or the HSQLDB jar is missing.

// realEngine is an in-memory HSQLDB database in MVCC mode.
var realEngine = enginetest.Engine{
	Name:     "HSQLDB",
	Jar:      jdbcbridge.HSQLDBJar,
	DBPrefix: "hsqldbtest",
	URL: func(name string) string {
		return "jdbc:hsqldb:mem:" + name + ";hsqldb.tx=mvcc"
	},
	User:      "SA",
	Catalogue: Catalogue,
}

func TestMain(m *testing.M) { enginetest.Main(m) }

func TestDDLIdempotentOnHSQLDB(t *testing.T) { enginetest.DDLIdempotent(t, realEngine) }

func TestPositionAllocateHoldsTheCounter(t *testing.T) {
	enginetest.PositionAllocateHoldsTheCounter(t, realEngine)
}

func TestErrorRules(t *testing.T) { enginetest.ErrorRules(t, realEngine) }
