package jdbcbridge

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestInvalidUTF8ParameterRefused: a string parameter that is not valid UTF-8 is refused with
// ErrInvalidText (SQLSTATE 22021), never stored or echoed with U+FFFD; the connection stays
// usable.
func TestInvalidUTF8ParameterRefused(t *testing.T) {
	bad := []struct{ name, s string }{
		{"ff fe", "{\"a\":\"\xff\xfe\"}"},
		{"overlong slash c0 af", "a\xc0\xafb"},
		{"surrogate ed a0 80", "x\xed\xa0\x80y"},
		{"truncated e2 82", "end\xe2\x82"},
	}
	forEngines(t, func(t *testing.T, e engine) {
		db := e.open(t)
		mustExec(t, db, "CREATE TABLE txt (id INT PRIMARY KEY, v VARCHAR(100), c CLOB)")
		for i, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				_, err := db.Exec("INSERT INTO txt (id, v, c) VALUES (?, ?, ?)", i, tc.s, "ok")
				assertInvalidText(t, err)
				_, err = db.Exec("INSERT INTO txt (id, v, c) VALUES (?, ?, ?)", i, "ok", tc.s)
				assertInvalidText(t, err)
				var got string
				err = db.QueryRow("SELECT CAST(? AS VARCHAR(100)) FROM txt WHERE 1 = 0 UNION ALL SELECT CAST(? AS VARCHAR(100)) FROM (VALUES (1)) AS x(y)", tc.s, tc.s).Scan(&got)
				if err == nil {
					t.Fatalf("echoed %q as %q", tc.s, got)
				}
				assertInvalidText(t, err)
				// SQL text is text too.
				_, err = db.Exec("INSERT INTO txt (id, v) VALUES (99, '" + tc.s + "')")
				assertInvalidText(t, err)
			})
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM txt").Scan(&n); err != nil || n != 0 {
			t.Fatalf("after refusals: %d rows, %v (want 0 rows, nothing stored)", n, err)
		}
		// Valid text, including 4-byte forms, still round-trips byte for byte.
		good := "héllo \u20ac \U0001F600 \u0000end"
		mustExec(t, db, "INSERT INTO txt (id, v, c) VALUES (1, ?, ?)", good, good)
		var v, c string
		if err := db.QueryRow("SELECT v, c FROM txt WHERE id = 1").Scan(&v, &c); err != nil || v != good || c != good {
			t.Fatalf("round trip: %q %q %v", v, c, err)
		}
	})
}

// TestUnencodableTextFromDatabaseRefused: text the database returns with an unpaired
// surrogate has no UTF-8 form; reading it is an error (22021), not a '?' or U+FFFD.
func TestUnencodableTextFromDatabaseRefused(t *testing.T) {
	queries := map[string]string{
		"h2":     "SELECT CHAR(55296)",
		"hsqldb": "VALUES (CHAR(55296))",
	}
	forEngines(t, func(t *testing.T, e engine) {
		db := e.open(t)
		ctx := context.Background()
		var got string
		err := db.QueryRowContext(ctx, queries[e.name]).Scan(&got)
		if err == nil {
			t.Fatalf("lone surrogate U+D800 came back as %q (% x)", got, got)
		}
		assertInvalidText(t, err)
		// The connection keeps working.
		var n int
		if err := db.QueryRowContext(ctx, e.selectOne).Scan(&n); err != nil || n != 1 {
			t.Fatalf("after the refusal: %d, %v", n, err)
		}
		// A surrogate pair (one supplementary character) is fine.
		pair := map[string]string{"h2": "SELECT CHAR(55357) || CHAR(56832)", "hsqldb": "VALUES (CHAR(55357) || CHAR(56832))"}
		if err := db.QueryRowContext(ctx, pair[e.name]).Scan(&got); err != nil || got != "\U0001F600" {
			t.Fatalf("surrogate pair: %q, %v", got, err)
		}
	})
}

func assertInvalidText(t *testing.T, err error) {
	t.Helper()
	var be *Error
	if !errors.Is(err, ErrInvalidText) || !errors.As(err, &be) || be.State != "22021" {
		t.Fatalf("got %v, want ErrInvalidText (SQLSTATE 22021)", err)
	}
}

// TestClobTextAroundTheStreamLimit: text bound to a CLOB parameter goes with setString up to
// 64 Ki UTF-16 units and as a character stream above (Values.CLOB_STRING_MAX); on both sides of
// the limit, with a 4-byte character straddling it, the text round-trips exactly.
func TestClobTextAroundTheStreamLimit(t *testing.T) {
	const limit = 64 * 1024
	forEngines(t, func(t *testing.T, e engine) {
		db := e.open(t)
		mustExec(t, db, "CREATE TABLE clobs (id INT PRIMARY KEY, c CLOB)")
		cases := map[int]string{
			1: strings.Repeat("a", limit),
			2: strings.Repeat("a", limit+1),
			3: strings.Repeat("a", limit-1) + "\U0001F600", // the pair crosses the limit
			4: "{\"amount\":100,\"note\":\"é\U0001F600\"}",
		}
		for id, s := range cases {
			mustExec(t, db, "INSERT INTO clobs (id, c) VALUES (?, ?)", id, s)
		}
		for id, want := range cases {
			var got string
			if err := db.QueryRow("SELECT c FROM clobs WHERE id = ?", id).Scan(&got); err != nil {
				t.Fatalf("case %d: %v", id, err)
			}
			if got != want {
				t.Errorf("case %d: %d bytes back for %d sent", id, len(got), len(want))
			}
		}
	})
}
