package postgres

import (
	"database/sql"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/internal/ddlgolden"
)

// TestDDLIdempotentOnPostgres runs the DDL twice against the database of
// TIDEMARK_TEST_POSTGRES_DSN (a pgx DSN of an empty schema); skipped without it.
func TestDDLIdempotentOnPostgres(t *testing.T) {
	dsn := os.Getenv("TIDEMARK_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TIDEMARK_TEST_POSTGRES_DSN not set")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := dialect.Catalogue{
		Identity:      dialect.Identity{Name: "postgres", Placeholder: dialect.PlaceholderDollar},
		Scripts:       dialect.Scripts(dialect.ObjectSequence, ddl()),
		QueryColumns:  Catalogue().QueryColumns,
		Introspection: introspection(),
	}
	ddlgolden.RunTwice(t, db, c, "lower")
	cols, idx := ddlgolden.Introspect(t, db, c, "account_summary")
	t.Logf("account_summary columns: %v", cols)
	t.Logf("account_summary indexes: %v", idx)
}
