package schema

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Where a dialect declares that its engine has no IF NOT EXISTS
// (EngineFacts.NoIfNotExists), the core makes every CREATE TABLE, CREATE
// INDEX and CREATE SEQUENCE of the scripts safe to run twice by guarding it
// with the dialect's existence query (Step.Unless); a creation racing
// another process's still fails with "already exists", which the engine's
// race rule retries, and the rerun's guard then finds the object.

var (
	createTable    = regexp.MustCompile(`(?is)^\s*CREATE\s+TABLE\s+([^\s(]+)`)
	createIndex    = regexp.MustCompile(`(?is)^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+([^\s(]+)\s+ON\s+([^\s(]+)`)
	createSequence = regexp.MustCompile(`(?is)^\s*CREATE\s+SEQUENCE\s+([^\s(;]+)`)
)

// guard sets step's Unless from the statement it creates, when the
// catalogue asks for guards and the step has none yet. A statement that
// creates nothing the core can name (an INSERT seeding a row) is left as
// it is: it must be idempotent by itself.
func guard(cat *dialect.Catalogue, step *Step) error {
	if !cat.Facts.NoIfNotExists || step.Unless != "" {
		return nil
	}
	var query string
	var binds map[string]any
	switch {
	case createIndex.MatchString(step.SQL):
		m := createIndex.FindStringSubmatch(step.SQL)
		query, binds = cat.QueryColumns.IndexExists, map[string]any{"index": objectName(cat, m[1]), "table": objectName(cat, m[2])}
	case createTable.MatchString(step.SQL):
		m := createTable.FindStringSubmatch(step.SQL)
		query, binds = cat.Introspection.TableExists, map[string]any{"table": objectName(cat, m[1])}
	case createSequence.MatchString(step.SQL):
		m := createSequence.FindStringSubmatch(step.SQL)
		query, binds = cat.Introspection.SequenceExists, map[string]any{"sequence": objectName(cat, m[1])}
	default:
		return nil
	}
	if query == "" {
		return fmt.Errorf("dialect %s declares no IF NOT EXISTS but no existence query for: %s", cat.Identity.Name, firstLine(step.SQL))
	}
	c := dialect.Compile(query, cat.Identity.Placeholder)
	args, err := c.Args(binds)
	if err != nil {
		return fmt.Errorf("dialect %s: guarding %s: %w", cat.Identity.Name, firstLine(step.SQL), err)
	}
	step.Unless, step.UnlessArgs = c.SQL, args
	return nil
}

// objectName is a name of the DDL as the engine's catalogue stores it: a
// quoted name as written, an unquoted one folded.
func objectName(cat *dialect.Catalogue, name string) string {
	if n := len(name); n >= 2 && strings.ContainsRune("\"`[", rune(name[0])) {
		return name[1 : n-1]
	}
	return catalogueName(cat, name)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
