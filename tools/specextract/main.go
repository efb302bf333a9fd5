// Command specextract extracts the DDL of the table-schemas specification into
// golden files, one per dialect and standard script:
//
//	go run ./tools/specextract -spec PATH/table-schemas.txt -out .
//
// writes plugins/<dialect>/testdata/golden/<script-name> for the dialects
// postgres, h2, hsqldb, mysql (the spec's MySQL/MariaDB blocks) and sqlserver.
//
// The golden files hold the spec's statements verbatim, with the spec's
// representative names (account_event, account_event_snapshots,
// account_summary) and default table names. The one rewrite the tool makes is
// the one a block label spells out: "PostgreSQL / H2 (HSQLDB: message_id
// VARCHAR(36))" gives HSQLDB message_id VARCHAR(36).
//
// Where Tidemark deliberately deviates from the spec, the golden file is
// edited by hand afterwards and the deviation is listed in
// docs/spec-deviations.md. The tool therefore never overwrites an existing
// golden file unless -force is given; after -force, reapply the documented
// hand edits.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// dialects are the golden-file directories the tool writes, in output order.
var dialects = []string{"postgres", "h2", "hsqldb", "mysql", "sqlserver"}

// scriptOf maps the first object a DDL block creates to its standard script
// (the constants of core/dialect/scripts.go).
var scriptOf = map[string]string{
	"account_event":                 "event-store-schema.sql",
	"account_event_snapshots":       "snapshot-schema.sql",
	"EVENT_STORE_GLOBAL_POSITION":   "event-store-global-position-schema.sql",
	"EVENT_CAPTURE_RECORDS":         "event-capture-records-schema.sql",
	"EVENT_CAPTURE_GLOBAL_POSITION": "event-capture-global-position-schema.sql",
	"READ_MODEL_CAPTURE_POSITIONS":  "read-model-topic-schema.sql",
	"TOPIC_COMPACTION":              "topic-compaction-schema.sql",
	"CONSUMERS":                     "consumer-checkpoints-schema.sql",
	"CONSUMER_CHECKPOINTS":          "consumer-checkpoints-schema.sql",
	"CONSUMER_UNDELIVERED_MESSAGES": "consumer-undelivered-messages-schema.sql",
	"CONSUMER_SKIPPED_MESSAGES":     "consumer-skipped-messages-schema.sql",
	"READ_MODEL_EPOCHS":             "read-model-epochs-schema.sql",
	"account_summary":               "query-table-schema.sql",
	"SAGA_INSTANCES":                "create-saga-table.sql",
	"SAGA_DEADLINES":                "create-deadline-table.sql",
	"SAGA_DEADLINE_LOCKS":           "create-deadline-lock-table.sql",
	"HIGH_WATER_MARK_STORE":         "high-water-mark-store-schema.sql",
	"PARTITION_METADATA":            "partition-metadata-schema.sql",
	"PARTITION_INSTANCES":           "partition-instances-schema.sql",
	"PARTITION_OWNERSHIP":           "partition-ownership-schema.sql",
	"PARTITION_MEMBERS":             "partition-members-schema.sql",
	"EVENT_PUBLICATION_METADATA":    "event-publication-metadata-schema.sql",
}

var (
	objectName = regexp.MustCompile(`(?i)CREATE\s+(?:TABLE|SEQUENCE)\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)`)
	// statementStart are the first words of a statement's first line; after a
	// blank line, any other unindented line ends the DDL block.
	statementStart = regexp.MustCompile(`^(CREATE|ALTER|MERGE|INSERT|IF)\b`)
	hsqldbMessage  = regexp.MustCompile(`(?m)^(\s*message_id\s+)UUID(\s+)`)
)

// section is one dialect label and the SQL lines under it.
type section struct {
	label string
	lines []string
}

// block is one "DDL — all dialects" block of the spec.
type block struct {
	line     int
	sections []section
}

func main() {
	spec := flag.String("spec", "", "path of table-schemas.txt")
	out := flag.String("out", ".", "repository root to write plugins/<dialect>/testdata/golden into")
	force := flag.Bool("force", false, "overwrite existing golden files (hand edits are lost)")
	flag.Parse()
	if *spec == "" {
		fmt.Fprintln(os.Stderr, "specextract: -spec is required")
		os.Exit(2)
	}
	if err := run(*spec, *out, *force); err != nil {
		fmt.Fprintln(os.Stderr, "specextract:", err)
		os.Exit(1)
	}
}

func run(specPath, out string, force bool) error {
	blocks, err := parse(specPath)
	if err != nil {
		return err
	}
	files, err := assemble(blocks)
	if err != nil {
		return err
	}
	for _, d := range dialects {
		dir := filepath.Join(out, "plugins", d, "testdata", "golden")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		names := make([]string, 0, len(files[d]))
		for n := range files[d] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			path := filepath.Join(dir, n)
			if _, err := os.Stat(path); err == nil && !force {
				fmt.Fprintf(os.Stderr, "specextract: keeping existing %s (use -force to overwrite)\n", path)
				continue
			}
			if err := os.WriteFile(path, []byte(files[d][n]), 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("%s: %d scripts\n", d, len(files[d]))
	}
	return nil
}

// parse reads every DDL block of the spec.
func parse(path string) ([]block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks  []block
		cur     *block
		afterNL bool
		n       int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), " \t\r")
		if strings.HasPrefix(line, "DDL — all dialects") {
			blocks = append(blocks, block{line: n})
			cur = &blocks[len(blocks)-1]
			afterNL = false
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case line == "":
			afterNL = true
			if len(cur.sections) > 0 {
				s := &cur.sections[len(cur.sections)-1]
				s.lines = append(s.lines, "")
			}
		case strings.HasPrefix(line, "-- "):
			cur.sections = append(cur.sections, section{label: strings.TrimPrefix(line, "-- ")})
			afterNL = false
		case afterNL && !statementStart.MatchString(line):
			cur = nil // prose: the block has ended
		default:
			if len(cur.sections) == 0 {
				return nil, fmt.Errorf("line %d: SQL before any dialect label", n)
			}
			s := &cur.sections[len(cur.sections)-1]
			s.lines = append(s.lines, line)
			afterNL = false
		}
	}
	return blocks, sc.Err()
}

// targets returns the golden dialects a block label applies to.
func targets(label string) []string {
	if strings.HasPrefix(label, "MariaDB") && !strings.Contains(label, "MySQL /") {
		return nil // "MariaDB — same DDL as MySQL above": the mysql files hold it
	}
	var out []string
	for _, c := range []struct{ word, dialect string }{
		{"PostgreSQL", "postgres"}, {"H2", "h2"}, {"HSQLDB", "hsqldb"},
		{"MySQL", "mysql"}, {"SQL Server", "sqlserver"},
	} {
		if strings.Contains(label, c.word) {
			out = append(out, c.dialect)
		}
	}
	return out
}

// assemble turns blocks into file contents per dialect and script name.
func assemble(blocks []block) (map[string]map[string]string, error) {
	files := map[string]map[string]string{}
	for _, d := range dialects {
		files[d] = map[string]string{}
	}
	for _, b := range blocks {
		for _, s := range b.sections {
			body := strings.Trim(strings.Join(s.lines, "\n"), "\n")
			ts := targets(s.label)
			if body == "" {
				if len(ts) > 0 {
					return nil, fmt.Errorf("block at line %d: label %q has no statements", b.line, s.label)
				}
				continue
			}
			m := objectName.FindStringSubmatch(body)
			if m == nil {
				return nil, fmt.Errorf("block at line %d, %q: no CREATE TABLE or SEQUENCE", b.line, s.label)
			}
			script, ok := scriptOf[m[1]]
			if !ok {
				return nil, fmt.Errorf("block at line %d: object %s maps to no script", b.line, m[1])
			}
			for _, d := range ts {
				text := body
				if d == "hsqldb" && strings.Contains(s.label, "HSQLDB: message_id VARCHAR(36)") {
					text = hsqldbMessage.ReplaceAllStringFunc(text, func(m string) string {
						// keep the column alignment: VARCHAR(36) is 7 characters wider
						sub := hsqldbMessage.FindStringSubmatch(m)
						pad := sub[2]
						if len(pad) > 7 {
							pad = pad[:len(pad)-7]
						}
						return sub[1] + "VARCHAR(36)" + pad
					})
				}
				prev, ok := files[d][script]
				if !ok {
					prev = "-- " + script + " for " + d + ", extracted from table-schemas.txt by tools/specextract.\n" +
						"-- Deliberate deviations are hand edits, listed in docs/spec-deviations.md.\n"
				}
				files[d][script] = prev + "\n-- " + s.label + "\n" + text + "\n"
			}
		}
	}
	for _, d := range dialects {
		if len(files[d]) != len(scriptNames()) {
			return nil, fmt.Errorf("%s: %d scripts extracted, want %d", d, len(files[d]), len(scriptNames()))
		}
	}
	return files, nil
}

// scriptNames lists the distinct script names of scriptOf.
func scriptNames() map[string]bool {
	out := map[string]bool{}
	for _, s := range scriptOf {
		out[s] = true
	}
	return out
}
