package jdbcbridge

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

type typeCase struct {
	name   string
	h2     string // column type on H2 ("" = same as hsqldb)
	hsqldb string // column type on HSQLDB ("" = same as h2)
	in     any
	want   any // nil means: expect NULL
	dbType string
}

func bigString(n int) string {
	var sb strings.Builder
	parts := []string{"a", "é", "€", "😀", "𝄞", "\n"}
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(parts[i%len(parts)])
	}
	return sb.String()
}

func bigBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

type myUUID [16]byte

func typeCases() []typeCase {
	plus0530 := time.FixedZone("", 5*3600+1800)
	minus7 := time.FixedZone("", -7*3600)
	uuidBytes := myUUID{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00}
	clob := bigString(1<<20 + 12345)
	blob := bigBytes(1<<20 + 777)
	return []typeCase{
		{name: "bool_true", h2: "BOOLEAN", in: true, want: true},
		{name: "bool_false", h2: "BOOLEAN", in: false, want: false},
		{name: "smallint", h2: "SMALLINT", in: int64(-32768), want: int64(-32768)},
		{name: "int", h2: "INTEGER", in: int64(math.MinInt32), want: int64(math.MinInt32)},
		{name: "bigint_max", h2: "BIGINT", in: int64(math.MaxInt64), want: int64(math.MaxInt64)},
		{name: "bigint_min", h2: "BIGINT", in: int64(math.MinInt64), want: int64(math.MinInt64)},
		{name: "double", h2: "DOUBLE", in: 1.2345678901234567e300, want: 1.2345678901234567e300},
		{name: "double_small", h2: "DOUBLE", in: -5e-324, want: -5e-324},
		{name: "decimal_string", h2: "DECIMAL(38,10)", in: "1234567890123456789012345678.0123456789", want: "1234567890123456789012345678.0123456789"},
		{name: "decimal_type", h2: "DECIMAL(20,6)", in: Decimal("-0.000001"), want: "-0.000001"},
		{name: "decimal_int", h2: "DECIMAL(20,2)", in: int64(42), want: "42.00"},
		{name: "varchar_utf8", h2: "VARCHAR(100)", in: "héllo € 😀 𝄞 日本", want: "héllo € 😀 𝄞 日本"},
		{name: "varchar_empty", h2: "VARCHAR(10)", in: "", want: ""},
		{name: "varbinary", h2: "VARBINARY(100)", in: []byte{0, 1, 2, 0xfe, 0xff}, want: []byte{0, 1, 2, 0xfe, 0xff}},
		{name: "date", h2: "DATE", in: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), want: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{name: "date_old", h2: "DATE", in: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), want: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{name: "date_wallclock", h2: "DATE", in: time.Date(2023, 12, 31, 0, 0, 0, 0, plus0530), want: time.Date(2023, 12, 31, 0, 0, 0, 0, time.UTC)},
		{name: "time_micros", h2: "TIME(6)", in: time.Date(0, 1, 1, 23, 59, 58, 123456000, time.UTC), want: time.Date(0, 1, 1, 23, 59, 58, 123456000, time.UTC)},
		{name: "timestamp_micros", h2: "TIMESTAMP(6)", in: time.Date(2024, 3, 10, 12, 34, 56, 789012000, time.UTC), want: time.Date(2024, 3, 10, 12, 34, 56, 789012000, time.UTC)},
		{name: "timestamp_pre1970", h2: "TIMESTAMP(6)", in: time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC), want: time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		{name: "timestamp_zoned_input", h2: "TIMESTAMP(6)", in: time.Date(2024, 3, 10, 5, 0, 0, 1000, minus7), want: time.Date(2024, 3, 10, 12, 0, 0, 1000, time.UTC)},
		{name: "timestamptz", h2: "TIMESTAMP(6) WITH TIME ZONE", in: time.Date(2024, 7, 1, 8, 30, 0, 123456000, plus0530), want: time.Date(2024, 7, 1, 8, 30, 0, 123456000, plus0530)},
		{name: "timestamptz_utc", h2: "TIMESTAMP(6) WITH TIME ZONE", in: time.Date(2000, 1, 1, 0, 0, 0, 1000, time.UTC), want: time.Date(2000, 1, 1, 0, 0, 0, 1000, time.UTC)},
		{name: "uuid", h2: "UUID", in: uuidBytes, want: "123e4567-e89b-12d3-a456-426614174000", dbType: "UUID"},
		{name: "uuid_array", h2: "UUID", in: [16]byte(uuidBytes), want: "123e4567-e89b-12d3-a456-426614174000"},
		{name: "clob_small", h2: "CLOB", in: "small 😀 clob", want: "small 😀 clob"},
		{name: "clob_large", h2: "CLOB", in: clob, want: clob},
		{name: "blob_small", h2: "BLOB", in: []byte("blob"), want: []byte("blob")},
		{name: "blob_large", h2: "BLOB", in: blob, want: blob},
		{name: "null_int", h2: "INTEGER", in: nil, want: nil},
		{name: "null_bool", h2: "BOOLEAN", in: nil, want: nil},
		{name: "null_double", h2: "DOUBLE", in: nil, want: nil},
		{name: "null_decimal", h2: "DECIMAL(10,2)", in: nil, want: nil},
		{name: "null_varchar", h2: "VARCHAR(10)", in: nil, want: nil},
		{name: "null_varbinary", h2: "VARBINARY(10)", in: nil, want: nil},
		{name: "null_date", h2: "DATE", in: nil, want: nil},
		{name: "null_time", h2: "TIME(6)", in: nil, want: nil},
		{name: "null_timestamp", h2: "TIMESTAMP(6)", in: nil, want: nil},
		{name: "null_timestamptz", h2: "TIMESTAMP(6) WITH TIME ZONE", in: nil, want: nil},
		{name: "null_uuid", h2: "UUID", in: nil, want: nil},
		{name: "null_clob", h2: "CLOB", in: nil, want: nil},
		{name: "null_blob", h2: "BLOB", in: nil, want: nil},
	}
}

func sameValue(got, want any) bool {
	switch w := want.(type) {
	case time.Time:
		g, ok := got.(time.Time)
		if !ok || !g.Equal(w) {
			return false
		}
		_, go1 := g.Zone()
		_, wo := w.Zone()
		return go1 == wo
	case []byte:
		g, ok := got.([]byte)
		return ok && bytes.Equal(g, w)
	case float64:
		g, ok := got.(float64)
		return ok && math.Float64bits(g) == math.Float64bits(w)
	}
	return reflect.DeepEqual(got, want)
}

func short(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 120 {
		return s[:120] + fmt.Sprintf("... (%d chars)", len(s))
	}
	return s
}

// TestTypeRoundTrip writes every value type through a prepared statement and reads it back,
// both through a server-side prepared statement and the one-shot fast path.
func TestTypeRoundTrip(t *testing.T) {
	forEngines(t, func(t *testing.T, e engine) {
		db := e.open(t)
		ctx := context.Background()
		for i, tc := range typeCases() {
			t.Run(tc.name, func(t *testing.T) {
				typ := tc.h2
				if e.name == "hsqldb" && tc.hsqldb != "" {
					typ = tc.hsqldb
				}
				table := fmt.Sprintf("rt_%d", i)
				mustExec(t, db, fmt.Sprintf("CREATE TABLE %s (id INTEGER PRIMARY KEY, v %s)", table, typ))
				stmt, err := db.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s (id, v) VALUES (?, ?)", table))
				if err != nil {
					t.Fatal(err)
				}
				defer stmt.Close()
				if _, err := stmt.ExecContext(ctx, 1, tc.in); err != nil {
					t.Fatalf("insert %s: %v", short(tc.in), err)
				}
				if _, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (id, v) VALUES (?, ?)", table), 2, tc.in); err != nil {
					t.Fatalf("insert (fast path) %s: %v", short(tc.in), err)
				}
				rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT v FROM %s ORDER BY id", table))
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				cts, err := rows.ColumnTypes()
				if err != nil {
					t.Fatal(err)
				}
				if tc.dbType != "" && cts[0].DatabaseTypeName() != tc.dbType {
					t.Errorf("DatabaseTypeName = %q, want %q", cts[0].DatabaseTypeName(), tc.dbType)
				}
				if nullable, ok := cts[0].Nullable(); ok && !nullable {
					t.Errorf("column reported NOT NULL")
				}
				chunksBefore := lobChunks.Load()
				n := 0
				for rows.Next() {
					var got any
					if err := rows.Scan(&got); err != nil {
						t.Fatal(err)
					}
					if !sameValue(got, tc.want) {
						t.Errorf("row %d: got %s, want %s", n+1, short(got), short(tc.want))
					}
					if tc.want != nil && got != nil && cts[0].ScanType() != reflect.TypeOf(got) {
						t.Errorf("ScanType %v but value is %T", cts[0].ScanType(), got)
					}
					n++
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if n != 2 {
					t.Fatalf("got %d rows, want 2", n)
				}
				if strings.HasSuffix(tc.name, "_large") && lobChunks.Load()-chunksBefore < 4 {
					t.Errorf("large object was not fetched in chunks (%d chunk reads)", lobChunks.Load()-chunksBefore)
				}
			})
		}
	})
}
