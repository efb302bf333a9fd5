package schema

import (
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Formats accepted by Export.
var Formats = []string{"sql", "template", "flyway", "liquibase", "golang-migrate", "goose"}

// File is one exported file.
type File struct {
	Name    string
	Content string
}

// Unit is one migration unit: one script filled for one table instance (or
// a shared script, once). Its ID never changes, so the file exported for it
// keeps its version for ever (see ExportVersioned).
type Unit struct {
	Script     string // the script's name, e.g. "event-store-schema.sql"
	Table      string // the per-table value, "" for a shared script
	Statements []string
}

// ID is the unit's stable identity: the script name, and for a per-table
// script "@" and the table, e.g. "event-store-schema.sql@BANK_ACCOUNT_EVENTS".
// It is written into every exported file (see UnitHeader).
func (u Unit) ID() string {
	if u.Table == "" {
		return u.Script
	}
	return u.Script + "@" + u.Table
}

// Slug is the file-name part of the unit: event_store_bank_account_events.
func (u Unit) Slug() string {
	s := strings.TrimSuffix(u.Script, ".sql")
	s = strings.TrimSuffix(s, "-schema")
	if u.Table != "" {
		s += "-" + strings.ToLower(u.Table)
	}
	return strings.ReplaceAll(s, "-", "_")
}

// Units groups plan steps into migration units, in creation order.
func Units(steps []Step) []Unit {
	var out []Unit
	for _, s := range steps {
		if n := len(out); n > 0 && out[n-1].Script == s.Script && out[n-1].Table == s.Table {
			out[n-1].Statements = append(out[n-1].Statements, s.SQL)
			continue
		}
		out = append(out, Unit{Script: s.Script, Table: s.Table, Statements: []string{s.SQL}})
	}
	return out
}

// statements renders statements each followed by the dialect's terminator.
func statements(stmts []string, terminator string) string {
	var b strings.Builder
	for _, s := range stmts {
		s = strings.TrimSpace(s)
		if terminator == ";" {
			s = strings.TrimRight(s, ";")
		}
		b.WriteString(s)
		b.WriteString(terminator)
		b.WriteString("\n\n")
	}
	return b.String()
}

// UnitHeaderPrefix starts the comment line naming a file's migration unit.
const UnitHeaderPrefix = "-- tidemark-unit: "

// unitHeader is the first lines of a versioned file. It holds nothing that
// changes between Tidemark or plugin versions (no version number), so the
// same unit renders the same bytes for as long as its DDL is unchanged.
func unitHeader(cat *dialect.Catalogue, u Unit) string {
	return fmt.Sprintf("-- Tidemark schema for dialect %s; never edit an applied migration.\n%s%s\n", cat.Identity.Name, UnitHeaderPrefix, u.ID())
}

// Export renders the schema for a migration tool as if into an empty
// directory. Files come in creation order: position objects before the
// tables that draw from them. Statements guarded by the core at runtime
// (MySQL query-table indexes) are exported unguarded; a migration tool runs
// each file once. For a directory holding earlier exports use
// ExportVersioned, which keeps every version already given out.
func Export(cat *dialect.Catalogue, names *Names, queries []QueryTable, cqrsPrefix, format string) ([]File, error) {
	term := cat.Identity.Terminator()
	switch format {
	case "template":
		header := fmt.Sprintf("-- Tidemark schema for %s (dialect %s %s)\n", cat.Identity.Name, cat.Identity.Name, cat.Identity.Version)
		var files []File
		for _, sc := range cat.Scripts {
			body := header + "-- Placeholders: ${…} are table names; fill them with your tool (Flyway placeholders, Liquibase parameters).\n"
			if sc.PerTable != "" {
				body += fmt.Sprintf("-- Apply once per table, with ${%s} set to each table's name.\n", sc.PerTable)
			}
			files = append(files, File{Name: sc.Name, Content: body + "\n" + statements(sc.Statements, term)})
		}
		return files, nil
	case "sql":
		steps, err := Plan(cat, names, queries, cqrsPrefix)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "-- Tidemark schema for %s (dialect %s %s)\n", cat.Identity.Name, cat.Identity.Name, cat.Identity.Version)
		for _, u := range Units(steps) {
			fmt.Fprintf(&b, "\n-- %s%s\n", u.Script, tableNote(u.Table))
			b.WriteString(statements(u.Statements, term))
		}
		return []File{{Name: "schema.sql", Content: b.String()}}, nil
	}
	return ExportVersioned(cat, names, queries, cqrsPrefix, format, nil)
}

func tableNote(t string) string {
	if t == "" {
		return ""
	}
	return " (" + t + ")"
}
