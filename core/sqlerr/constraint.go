package sqlerr

import (
	"regexp"
	"strings"
)

// constraintShapes cut the violated constraint's (or unique index's) name out
// of an engine's message, for drivers that carry no constraint field. They
// are tried in order and the first that matches wins; each has one group,
// the name. The more specific shapes come first, because H2 and SQL Server
// append the failing row or SQL text, which may itself quote anything.
var constraintShapes = []*regexp.Regexp{
	// H2: Unique index or primary key violation: "PUBLIC.CONSTRAINT_INDEX_5 ON PUBLIC.T(…)…"
	// or "PRIMARY KEY ON PUBLIC.T(ID)…"; Referential integrity constraint
	// violation: "FK_NAME: PUBLIC.T FOREIGN KEY(…)…".
	regexp.MustCompile(`violation: "([^":]+?)(?: ON |: )`),
	// HSQLDB: integrity constraint violation: unique constraint or index
	// violation ; SYS_PK_10098 table: EVENT_STORE
	regexp.MustCompile(`violation(?:[^;"]*) ; ([^ ;]+) table: `),
	// MySQL / MariaDB ER_DUP_ENTRY: Duplicate entry 'x' for key 'PRIMARY'
	// (MySQL 8.0.19+: 'table.PRIMARY'); the key ends the message, the
	// duplicate value before it may hold anything.
	regexp.MustCompile(`for key '([^']+)'$`),
	// MySQL / MariaDB foreign keys: … CONSTRAINT `fk_name` FOREIGN KEY …
	regexp.MustCompile("CONSTRAINT `([^`]+)`"),
	// SQL Server: Violation of PRIMARY KEY constraint 'PK__t__3213E83F…';
	// conflicted with the FOREIGN KEY constraint "fk_…"; PostgreSQL's and
	// Firebird's texts: … constraint "t_pkey", constraint "INTEG_5".
	regexp.MustCompile(`(?i)constraint '([^']+)'`),
	regexp.MustCompile(`(?i)constraint "([^"]+)"`),
	// SQL Server 2601: … with unique index 'idx_…'.
	regexp.MustCompile(`(?i)unique index '([^']+)'`),
	// SQLite names no constraint, only the columns: UNIQUE constraint
	// failed: T.a, T.b (2067). The column list stands in for the name.
	// FOREIGN KEY constraint failed names nothing.
	regexp.MustCompile(`constraint failed: ([\w.$"\[\]]+(?:, [\w.$"\[\]]+)*)(?: \(\d+\))?$`),
}

// constraintFromMessage returns the constraint name in msg, or "".
func constraintFromMessage(msg string) string {
	for _, re := range constraintShapes {
		if m := re.FindStringSubmatch(msg); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	return ""
}
