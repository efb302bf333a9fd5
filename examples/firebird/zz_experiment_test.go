package firebird_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/tidemarkdb/tidemark/core/sqlerr"
)

func TestZZRace(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	stmts := []string{
		`EXECUTE BLOCK AS
BEGIN
  IF (NOT EXISTS (SELECT 1 FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = 'TT')) THEN
    EXECUTE STATEMENT 'CREATE TABLE TT (id INT NOT NULL PRIMARY KEY, a VARCHAR(20), CONSTRAINT uq_TT UNIQUE (a))';
END`,
		`EXECUTE BLOCK AS
BEGIN
  IF (NOT EXISTS (SELECT 1 FROM RDB$INDICES WHERE RDB$INDEX_NAME = 'IDX_TT_ID')) THEN
    EXECUTE STATEMENT 'CREATE INDEX idx_TT_id ON TT (id, a)';
END`,
		`CREATE TABLE TT2 (id INT)`,
		`CREATE INDEX idx_TT2 ON TT (a)`,
	}
	for round := 0; round < 4; round++ {
		d := freshFirebird(t)
		for _, st := range stmts {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := 0; i < 4; i++ {
				db, _ := sql.Open(d.DriverName, d.DSN)
				db.SetMaxOpenConns(1)
				db.Ping()
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					defer db.Close()
					<-start
					_, err := db.ExecContext(context.Background(), st)
					if err != nil {
						dd := sqlerr.Extract(err)
						fmt.Printf("round %d stmt %.30q proc %d: %v %q\n", round, st, i, dd.VendorCodes, err.Error())
					}
				}(i)
			}
			close(start)
			wg.Wait()
		}
	}
}
