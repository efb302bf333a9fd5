package jdbcbridge

import (
	"context"
	"testing"
)

// BenchmarkRoundTrip measures one statement round trip (a one-row query through the real Java
// server) per operation. Run the specified 20,000 round trips per engine with
//
//	go test -run '^$' -bench RoundTrip -benchtime 20000x ./jdbcbridge
func BenchmarkRoundTrip(b *testing.B) {
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			db := e.open(b)
			db.SetMaxOpenConns(1)
			ctx := context.Background()
			var n int
			if err := db.QueryRowContext(ctx, e.selectOne).Scan(&n); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := db.QueryRowContext(ctx, e.selectOne).Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e.name+"/prepared", func(b *testing.B) {
			db := e.open(b)
			db.SetMaxOpenConns(1)
			ctx := context.Background()
			st, err := db.PrepareContext(ctx, e.selectOne)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var n int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := st.QueryRowContext(ctx).Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
