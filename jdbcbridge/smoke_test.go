package jdbcbridge

import "testing"

func TestSmoke(t *testing.T) {
	forEngines(t, func(t *testing.T, e engine) {
		db := e.open(t)
		var n int
		if err := db.QueryRow(e.selectOne).Scan(&n); err != nil || n != 1 {
			t.Fatalf("got %d, %v", n, err)
		}
	})
}
