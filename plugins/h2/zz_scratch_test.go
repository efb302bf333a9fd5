//go:build scratch

package h2

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

var srv *jdbcbridge.Server

func TestMain(m *testing.M) {
	var err error
	srv, err = jdbcbridge.StartServer(context.Background(), jdbcbridge.StartOptions{Stderr: os.Stderr})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

func open(t *testing.T, eng, name string) *sql.DB {
	var url, user string
	if eng == "h2" {
		url, user = "jdbc:h2:mem:"+name+";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa"
	} else {
		url, user = "jdbc:hsqldb:mem:"+name+";hsqldb.tx=mvcc", "SA"
	}
	db, err := sql.Open("jdbcbridge", srv.DSN(url, user, ""))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func run(t *testing.T, db interface{ Query(string, ...any) (*sql.Rows, error) }, q string, args ...any) {
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Logf("%s\n  ERR %v", q, err)
		return
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		rows.Scan(p...)
		out = append(out, fmt.Sprintf("%v", v))
	}
	t.Logf("%s\n  OK %v %s", q, cols, strings.Join(out, " "))
}

func TestScratch(t *testing.T) {
	for _, eng := range []string{"h2", "hsqldb"} {
		db := open(t, eng, "s1")
		for _, q := range strings.Split(os.Getenv("Q"), ";;") {
			run(t, db, q)
		}
		_ = sync.Mutex{}
		_ = time.Second
	}
}

func TestBinds(t *testing.T) {
	for _, eng := range []string{"h2", "hsqldb"} {
		db := open(t, eng, "s2")
		db.Exec("CREATE TABLE P (id TINYINT NOT NULL PRIMARY KEY, val BIGINT NOT NULL)")
		db.Exec("CREATE TABLE U (id VARCHAR(36) PRIMARY KEY, a VARCHAR(10) NOT NULL, s BIGINT NOT NULL, UNIQUE (a, s))")
		db.Exec("CREATE TABLE H (topic VARCHAR(20) PRIMARY KEY, exp TIMESTAMP WITH TIME ZONE)")
		db.Exec("INSERT INTO H VALUES ('x', NULL)")
		db.Exec("INSERT INTO P VALUES (1, 0)")
		db.Exec("INSERT INTO P VALUES (2, 0)")
		run(t, db, "SELECT id FROM P ORDER BY id LIMIT ?", 1)
		run(t, db, "SELECT id FROM P ORDER BY id FETCH FIRST ? ROWS ONLY", 1)
		r, err := db.Exec("UPDATE H SET exp = CURRENT_TIMESTAMP + ? * INTERVAL '0.001' SECOND WHERE topic = ?", int64(1500), "x")
		t.Log(eng, "interval", r, err)
		run(t, db, "SELECT exp, CURRENT_TIMESTAMP FROM H")
		r, err = db.Exec("UPDATE H SET exp = TIMESTAMPADD(MILLISECOND, ?, CURRENT_TIMESTAMP) WHERE topic = ?", int64(2500), "x")
		t.Log(eng, "tsadd", r, err)
		run(t, db, "SELECT exp, CURRENT_TIMESTAMP, exp < CURRENT_TIMESTAMP FROM H")
		r, err = db.Exec("UPDATE H SET exp = DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP) WHERE topic = ?", int64(3500), "x")
		t.Log(eng, "dateadd", r, err)
		run(t, db, "SELECT exp, CURRENT_TIMESTAMP, exp < CURRENT_TIMESTAMP FROM H")
		_, err = db.Exec("INSERT INTO U VALUES ('1', 'a', 1)")
		_, err = db.Exec("INSERT INTO U VALUES ('1', 'a', 2)")
		t.Log(eng, "pk:", err)
		_, err = db.Exec("INSERT INTO U VALUES ('2', 'a', 1)")
		t.Log(eng, "uq:", err)
		_, err = db.Exec("INSERT INTO U VALUES ('2', 'a', 1), ('2', 'b', 1)")
		t.Log(eng, "uq2:", err)
		_, err = db.Exec("SELECT * FROM NOPE")
		t.Log(eng, "undef:", err)
	}
}

func TestLocks(t *testing.T) {
	for _, eng := range []string{"h2", "hsqldb"} {
		db := open(t, eng, "s3")
		db.SetMaxOpenConns(10)
		db.Exec("CREATE TABLE P (id TINYINT NOT NULL PRIMARY KEY, val BIGINT NOT NULL)")
		db.Exec("INSERT INTO P VALUES (1, 0)")
		tx1, _ := db.Begin()
		_, err := tx1.Exec("UPDATE P SET val = val + ? WHERE id = 1", 5)
		t.Log(eng, "tx1 update", err)
		var v int64
		tx1.QueryRow("SELECT val FROM P WHERE id = 1").Scan(&v)
		t.Log(eng, "tx1 sees", v)
		db.QueryRow("SELECT val FROM P WHERE id = 1").Scan(&v)
		t.Log(eng, "outside sees", v)
		done := make(chan string)
		go func() {
			tx2, _ := db.Begin()
			start := time.Now()
			_, err := tx2.Exec("UPDATE P SET val = val + ? WHERE id = 1", 3)
			var v2 int64
			err2 := tx2.QueryRow("SELECT val FROM P WHERE id = 1").Scan(&v2)
			cerr := tx2.Commit()
			done <- fmt.Sprintf("tx2 waited %v err=%v val=%d %v commit=%v", time.Since(start), err, v2, err2, cerr)
		}()
		time.Sleep(700 * time.Millisecond)
		t.Log(eng, "commit1", tx1.Commit())
		t.Log(eng, <-done)
		db.QueryRow("SELECT val FROM P WHERE id = 1").Scan(&v)
		t.Log(eng, "final", v)
	}
}
