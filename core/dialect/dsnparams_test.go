package dialect

import "testing"

// TestApplyDSNParams: the parameters a DSN lacks are appended; one the
// user set, whatever its value, is kept; another driver's DSN is left.
func TestApplyDSNParams(t *testing.T) {
	id := Identity{DriverName: "sqlite", DSNParams: []DSNParam{
		{Name: "_pragma", Value: "busy_timeout(10000)", Match: "busy_timeout("},
		{Name: "_txlock", Value: "immediate"},
	}}
	for _, c := range []struct{ driver, dsn, want string }{
		{"sqlite", "file:a.db", "file:a.db?_pragma=busy_timeout(10000)&_txlock=immediate"},
		{"sqlite", "file:a.db?", "file:a.db?_pragma=busy_timeout(10000)&_txlock=immediate"},
		{"sqlite", "file:a.db?_pragma=journal_mode(WAL)", "file:a.db?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"},
		{"sqlite", "file:a.db?_pragma=busy_timeout(500)&_txlock=deferred", "file:a.db?_pragma=busy_timeout(500)&_txlock=deferred"},
		{"sqlite", "file:a.db?_txlock=exclusive", "file:a.db?_txlock=exclusive&_pragma=busy_timeout(10000)"},
		{"other", "file:a.db", "file:a.db"},
	} {
		if got := id.ApplyDSNParams(c.driver, c.dsn); got != c.want {
			t.Errorf("%s %q: got %q, want %q", c.driver, c.dsn, got, c.want)
		}
	}
}
