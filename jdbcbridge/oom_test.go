package jdbcbridge

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"
)

// TestOutOfMemoryIsATypedErrorAndTheBridgeKeepsServing: a statement that exhausts a small
// heap (-Xmx96m, on a bridge of its own) fails with ErrOutOfMemory (HY001), and the bridge
// keeps serving: on HSQLDB the same connection, on H2 (which closes a database that ran out
// of memory) new databases.
func TestOutOfMemoryIsATypedErrorAndTheBridgeKeepsServing(t *testing.T) {
	startBridge(t)
	s, err := StartServer(context.Background(), StartOptions{JVMArgs: []string{"-Xmx96m"}, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			db, err := sql.Open("jdbcbridge", testDSN(s, e.url("oom_"+e.name), e.user, ""))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			mustExec(t, db, "CREATE TABLE hog (id BIGINT, v VARCHAR(2000))")
			mustExec(t, db, "INSERT INTO hog VALUES (0, REPEAT('x', 2000))")
			// Double the table until the heap runs out: 2^16 rows of 2 KB is over 96 MiB.
			var oomErr error
			for n := 1; n < 1<<17 && oomErr == nil; n *= 2 {
				_, oomErr = db.Exec("INSERT INTO hog SELECT id + ?, REPEAT(CAST(id + ? AS VARCHAR(20)), 150) FROM hog", int64(n), int64(n)) // a new string per row
			}
			var be *Error
			if !errors.Is(oomErr, ErrOutOfMemory) || !errors.As(oomErr, &be) {
				t.Fatalf("got %v, want ErrOutOfMemory (HY001)", oomErr)
			}
			t.Logf("refused: %v", oomErr)
			if e.name == "h2" {
				// H2 closes a database that ran out of memory (an in-memory one is lost):
				// engine behaviour, reported as such.
				_, err := db.Exec("DROP TABLE hog")
				if !errors.As(err, &be) || be.Code != 90098 {
					t.Fatalf("H2 after running out of memory: %v, want 90098 (database closed)", err)
				}
				return
			}
			// Free the heap: the failed statement was undone; drop what earlier ones added.
			mustExec(t, db, "DROP TABLE hog")
			var one int
			if err := db.QueryRow(e.selectOne).Scan(&one); err != nil || one != 1 {
				t.Fatalf("same connection after the refusal: %d, %v", one, err)
			}
		})
	}
	other, err := sql.Open("jdbcbridge", testDSN(s, "jdbc:h2:mem:after_oom", "sa", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Ping(); err != nil {
		t.Fatalf("a new connection after the refusals: %v", err)
	}
}
