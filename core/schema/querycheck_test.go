package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

func n64(v int64) *int64 { return &v }

func col(typ string, length, prec, scale *int64) *catalogueColumn {
	return &catalogueColumn{Name: "c", Type: typ, Length: length, Precision: prec, Scale: scale}
}

func TestColumnFits(t *testing.T) {
	plain := &dialect.Catalogue{Identity: dialect.Identity{Name: "postgres", QuoteOpen: `"`}}
	// MySQL's facts are declared, not guessed from its quote character.
	my := &dialect.Catalogue{Identity: dialect.Identity{Name: "mysql", QuoteOpen: "`"}, Facts: dialect.EngineFacts{
		QueryTypes: map[dialect.QueryFieldKind][]string{dialect.KindBoolean: {"BOOLEAN", "BIT", "TINYINT"}, dialect.KindInstant: {"DATETIME"}},
	}}
	// A backtick-quoting engine that declares nothing gets the standard's types.
	backtick := &dialect.Catalogue{Identity: dialect.Identity{Name: "other", QuoteOpen: "`"}}
	// An engine keeping 4 fractional digits (Firebird's 100 µs) declares it.
	fourDigits := &dialect.Catalogue{Identity: dialect.Identity{Name: "firebird"}, Facts: dialect.EngineFacts{InstantDigits: 4}}
	// An engine whose TIME keeps no fraction while its TIMESTAMP keeps 9.
	wholeTime := &dialect.Catalogue{Identity: dialect.Identity{Name: "locking"}, Facts: dialect.EngineFacts{InstantDigits: 9, TimeDigits: dialect.Digits(0)}}
	text := QueryField{Column: "c", Kind: dialect.KindText}
	integral := QueryField{Column: "c", Kind: dialect.KindInteger}
	dec := QueryField{Column: "c", Kind: dialect.KindDecimal, Precision: 19, Scale: 2}
	date := QueryField{Column: "c", Kind: dialect.KindDate}
	tm := QueryField{Column: "c", Kind: dialect.KindTime}
	instant := QueryField{Column: "c", Kind: dialect.KindInstant}
	boolean := QueryField{Column: "c", Kind: dialect.KindBoolean}
	cases := []struct {
		name string
		cat  *dialect.Catalogue
		f    QueryField
		c    *catalogueColumn
		want bool
	}{
		{"varchar 255", plain, text, col("CHARACTER VARYING", n64(255), nil, nil), true},
		{"varchar 500", plain, text, col("VARCHAR", n64(500), nil, nil), true},
		{"varchar 100", plain, text, col("VARCHAR", n64(100), nil, nil), false},
		{"nvarchar max", plain, text, col("NVARCHAR", n64(-1), nil, nil), true},
		{"text", plain, text, col("TEXT", nil, nil, nil), true},
		{"h2 text", plain, text, col("CHARACTER VARYING", n64(1000000000), nil, nil), true},
		{"clob", plain, text, col("CHARACTER LARGE OBJECT", n64(1<<31), nil, nil), true},
		{"tinytext", my, text, col("TINYTEXT", n64(255), nil, nil), false},
		{"text as bigint", plain, text, col("BIGINT", nil, n64(64), n64(0)), false},
		{"bigint", plain, integral, col("BIGINT", nil, n64(64), n64(0)), true},
		{"integer", plain, integral, col("INTEGER", nil, n64(32), n64(0)), false},
		{"varchar as integral", plain, integral, col("VARCHAR", n64(255), nil, nil), false},
		{"decimal same", plain, dec, col("NUMERIC", nil, n64(19), n64(2)), true},
		{"decimal wider", plain, dec, col("DECIMAL", nil, n64(24), n64(4)), true},
		{"decimal fewer integer digits", plain, dec, col("DECIMAL", nil, n64(19), n64(4)), false},
		{"decimal less scale", plain, dec, col("DECIMAL", nil, n64(30), n64(1)), false},
		{"unconstrained numeric", plain, dec, col("NUMERIC", nil, nil, nil), true},
		{"date", plain, date, col("DATE", nil, nil, nil), true},
		{"timestamp as date", plain, date, col("TIMESTAMP", nil, nil, n64(6)), false},
		{"time 6", plain, tm, col("TIME WITHOUT TIME ZONE", nil, nil, n64(6)), true},
		{"time 0", plain, tm, col("TIME", nil, nil, n64(0)), false},
		{"timestamp 6", plain, instant, col("TIMESTAMP WITHOUT TIME ZONE", nil, nil, n64(6)), true},
		{"timestamp 3", plain, instant, col("TIMESTAMP", nil, nil, n64(3)), false},
		{"datetime2 7", plain, instant, col("DATETIME2", nil, nil, n64(7)), true},
		{"datetime 6 mysql", my, instant, col("DATETIME", nil, nil, n64(6)), true},
		{"timestamp on mysql", my, instant, col("TIMESTAMP", nil, nil, n64(6)), false},
		{"boolean", plain, boolean, col("BOOLEAN", nil, nil, nil), true},
		{"bit", plain, boolean, col("BIT", nil, nil, nil), true},
		{"tinyint mysql", my, boolean, col("TINYINT", nil, n64(3), n64(0)), true},
		{"tinyint elsewhere", plain, boolean, col("TINYINT", nil, n64(8), n64(0)), false},
		{"tinyint, backtick undeclared", backtick, boolean, col("TINYINT", nil, n64(3), n64(0)), false},
		{"timestamp, backtick undeclared", backtick, instant, col("TIMESTAMP", nil, nil, n64(6)), true},
		{"timestamp 4 where 4 declared", fourDigits, instant, col("TIMESTAMP", nil, nil, n64(4)), true},
		{"timestamp 3 where 4 declared", fourDigits, instant, col("TIMESTAMP", nil, nil, n64(3)), false},
		{"time 4 where 4 declared", fourDigits, tm, col("TIME", nil, nil, n64(4)), true},
		{"time 0 where time digits 0", wholeTime, tm, col("TIME", nil, nil, n64(0)), true},
		{"timestamp 6 where time digits 0", wholeTime, instant, col("TIMESTAMP", nil, nil, n64(6)), true},
		{"timestamp 0 where time digits 0", wholeTime, instant, col("TIMESTAMP", nil, nil, n64(0)), false},
	}
	for _, c := range cases {
		if got := columnFits(c.cat, c.f, c.c); got != c.want {
			t.Errorf("%s: columnFits = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMessageIDFits(t *testing.T) {
	uuid := col("UUID", nil, nil, nil)
	char36 := col("CHAR", n64(36), nil, nil)
	cases := []struct {
		name    string
		c, recs *catalogueColumn
		want    bool
	}{
		{"uuid where records use uuid", uuid, uuid, true},
		{"varchar where records use uuid", col("CHARACTER VARYING", n64(36), nil, nil), uuid, false},
		{"char 36", char36, char36, true},
		{"varchar 64", col("VARCHAR", n64(64), nil, nil), char36, true},
		{"varchar 20", col("VARCHAR", n64(20), nil, nil), char36, false},
		{"nvarchar", col("NVARCHAR", n64(36), nil, nil), col("VARCHAR", n64(36), nil, nil), false},
		{"bigint", col("BIGINT", nil, nil, nil), char36, false},
	}
	for _, c := range cases {
		if _, _, got := messageIDFits(c.c, c.recs); got != c.want {
			t.Errorf("%s: messageIDFits = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestQueryTableErrorMessage(t *testing.T) {
	err := error(&QueryTableError{Table: "account_summary", Column: "balance", Found: "DECIMAL(19,2)", Declared: "NUMBER_DECIMAL DECIMAL(24,4)", Remedy: "drop table account_summary"})
	if !errors.Is(err, ErrQueryTableMismatch) || errors.Is(err, ErrMissingTable) {
		t.Fatalf("wrapping: %v", err)
	}
	for _, want := range []string{"account_summary", "balance", "DECIMAL(19,2)", "DECIMAL(24,4)", "drop table"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	missing := error(&QueryTableError{Table: "t", Found: "no table", Declared: "x", Remedy: "apply", missing: true})
	if !errors.Is(missing, ErrQueryTableMismatch) || !errors.Is(missing, ErrMissingTable) {
		t.Fatalf("missing table wrapping: %v", missing)
	}
}

func TestRebuildRemedyOrder(t *testing.T) {
	names := &Names{Shared: map[string]string{"consumers_table": "X_CONSUMERS"}}
	r := rebuildRemedy(names, QueryTable{Projection: "p"}, "p")
	order := []string{"CONSUMER_SKIPPED_MESSAGES", "CONSUMER_UNDELIVERED_MESSAGES", "CONSUMER_CHECKPOINTS", "X_CONSUMERS"}
	last := -1
	for _, o := range order {
		i := strings.Index(r, o)
		if i <= last {
			t.Fatalf("remedy %q: %s out of order", r, o)
		}
		last = i
	}
}
