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

// unit is one script instance: a script filled for one table.
type unit struct {
	script string
	table  string
	stmts  []string
}

func (u unit) slug() string {
	s := strings.TrimSuffix(u.script, ".sql")
	s = strings.TrimSuffix(s, "-schema")
	if u.table != "" {
		s += "-" + strings.ToLower(u.table)
	}
	return strings.ReplaceAll(s, "-", "_")
}

func units(steps []Step) []unit {
	var out []unit
	for _, s := range steps {
		if n := len(out); n > 0 && out[n-1].script == s.Script && out[n-1].table == s.Table {
			out[n-1].stmts = append(out[n-1].stmts, s.SQL)
			continue
		}
		out = append(out, unit{script: s.Script, table: s.Table, stmts: []string{s.SQL}})
	}
	return out
}

func statements(stmts []string) string {
	var b strings.Builder
	for _, s := range stmts {
		b.WriteString(strings.TrimRight(strings.TrimSpace(s), ";"))
		b.WriteString(";\n\n")
	}
	return b.String()
}

// Export renders the schema for a migration tool. Files come in creation
// order: position objects before the tables that draw from them. Statements
// guarded by the core at runtime (MySQL query-table indexes) are exported
// unguarded, with a comment; a migration tool runs each file once.
func Export(cat *dialect.Catalogue, names *Names, queries []QueryTable, cqrsPrefix, format string) ([]File, error) {
	header := fmt.Sprintf("-- Tidemark schema for %s (dialect %s %s)\n", cat.Identity.Name, cat.Identity.Name, cat.Identity.Version)
	if format == "template" {
		var files []File
		for _, sc := range cat.Scripts {
			body := header + "-- Placeholders: ${…} are table names; fill them with your tool (Flyway placeholders, Liquibase parameters).\n"
			if sc.PerTable != "" {
				body += fmt.Sprintf("-- Apply once per table, with ${%s} set to each table's name.\n", sc.PerTable)
			}
			files = append(files, File{Name: sc.Name, Content: body + "\n" + statements(sc.Statements)})
		}
		return files, nil
	}
	steps, err := Plan(cat, names, queries, cqrsPrefix)
	if err != nil {
		return nil, err
	}
	us := units(steps)
	var files []File
	switch format {
	case "sql":
		var b strings.Builder
		b.WriteString(header)
		for _, u := range us {
			fmt.Fprintf(&b, "\n-- %s%s\n", u.script, tableNote(u.table))
			b.WriteString(statements(u.stmts))
		}
		files = append(files, File{Name: "schema.sql", Content: b.String()})
	case "flyway":
		for i, u := range us {
			files = append(files, File{Name: fmt.Sprintf("V%d__%s.sql", i+1, u.slug()), Content: header + "\n" + statements(u.stmts)})
		}
	case "golang-migrate":
		for i, u := range us {
			files = append(files, File{Name: fmt.Sprintf("%06d_%s.up.sql", i+1, u.slug()), Content: header + "\n" + statements(u.stmts)})
		}
	case "goose":
		for i, u := range us {
			var b strings.Builder
			b.WriteString(header + "\n-- +goose Up\n")
			for _, s := range u.stmts {
				b.WriteString("-- +goose StatementBegin\n" + strings.TrimRight(strings.TrimSpace(s), ";") + ";\n-- +goose StatementEnd\n")
			}
			files = append(files, File{Name: fmt.Sprintf("%05d_%s.sql", i+1, u.slug()), Content: b.String()})
		}
	case "liquibase":
		var log strings.Builder
		log.WriteString("databaseChangeLog:\n")
		for i, u := range us {
			name := fmt.Sprintf("%03d_%s.sql", i+1, u.slug())
			files = append(files, File{Name: name, Content: header + "\n" + statements(u.stmts)})
			fmt.Fprintf(&log, "  - changeSet:\n      id: %d-%s\n      author: tidemark\n      changes:\n        - sqlFile:\n            path: %s\n            relativeToChangelogFile: true\n            splitStatements: true\n            endDelimiter: \";\"\n", i+1, u.slug(), name)
		}
		files = append(files, File{Name: "db.changelog-master.yaml", Content: log.String()})
	default:
		return nil, fmt.Errorf("unknown format %q (one of %s)", format, strings.Join(Formats, ", "))
	}
	return files, nil
}

func tableNote(t string) string {
	if t == "" {
		return ""
	}
	return " (" + t + ")"
}
