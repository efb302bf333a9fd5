package schema

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// ErrExportConflict is wrapped when an export would change a file a
// migration tool may already have applied.
var ErrExportConflict = errors.New("export would change an existing migration")

// ExportConflictError names the existing file and the unit it holds.
type ExportConflictError struct {
	File   string // the existing file's name
	Unit   string // the unit's ID
	Reason string
}

func (e *ExportConflictError) Error() string {
	return fmt.Sprintf("%s (%s): %s; nothing was written", e.File, e.Unit, e.Reason)
}

// Unwrap makes errors.Is(err, ErrExportConflict) hold.
func (e *ExportConflictError) Unwrap() error { return ErrExportConflict }

// LiquibaseChangelog is the changelog file of the liquibase format.
const LiquibaseChangelog = "db.changelog-master.yaml"

// versioned describes one tool's file naming.
type versioned struct {
	// migration matches a file the tool reads as a migration; group 1 is
	// its (major) version.
	migration *regexp.Regexp
	name      func(version int64, slug string) string
	render    func(cat *dialect.Catalogue, u Unit) string
}

var versionedFormats = map[string]versioned{
	// Flyway: V<version>__<description>.sql; a dotted version (V1.2__) counts
	// by its first number.
	"flyway": {regexp.MustCompile(`^V(\d+)(?:[._]\d+)*__.+\.sql$`),
		func(v int64, s string) string { return fmt.Sprintf("V%d__%s.sql", v, s) }, plainUnit},
	"golang-migrate": {regexp.MustCompile(`^(\d+)_.+\.(?:up|down)\.sql$`),
		func(v int64, s string) string { return fmt.Sprintf("%06d_%s.up.sql", v, s) }, plainUnit},
	"goose": {regexp.MustCompile(`^(\d+)_.+\.(?:sql|go)$`),
		func(v int64, s string) string { return fmt.Sprintf("%05d_%s.sql", v, s) }, gooseUnit},
	"liquibase": {regexp.MustCompile(`^(\d+)_.+\.sql$`),
		func(v int64, s string) string { return fmt.Sprintf("%03d_%s.sql", v, s) }, plainUnit},
}

func plainUnit(cat *dialect.Catalogue, u Unit) string {
	return unitHeader(cat, u) + "\n" + statements(u.Statements, cat.Identity.Terminator())
}

// gooseUnit wraps each statement in StatementBegin/End, so goose sends it
// whole whatever it contains.
func gooseUnit(cat *dialect.Catalogue, u Unit) string {
	var b strings.Builder
	b.WriteString(unitHeader(cat, u) + "\n-- +goose Up\n")
	for _, s := range u.Statements {
		s = strings.TrimSpace(s)
		if cat.Identity.Terminator() == ";" {
			s = strings.TrimRight(s, ";") + ";"
		}
		b.WriteString("-- +goose StatementBegin\n" + s + "\n-- +goose StatementEnd\n")
	}
	return b.String()
}

// held is an existing migration file that holds a Tidemark unit.
type held struct {
	file    File
	version int64
	legacy  bool // written before units carried their ID: matched by name
}

// ExportVersioned renders the schema for a versioned migration tool
// (flyway, liquibase, golang-migrate, goose) against the files a directory
// already holds (existing; nil for an empty directory). It returns only the
// files to write: one per unit not yet exported, numbered above every
// version in existing (the user's own migrations included), in creation
// order, and for liquibase the changelog with their changeSets appended.
//
// A unit keeps the version of the file that holds it: that file must render
// to the same bytes again, or the export is refused with an
// *ExportConflictError naming it, before anything is written.
func ExportVersioned(cat *dialect.Catalogue, names *Names, queries []QueryTable, cqrsPrefix, format string, existing []File) ([]File, error) {
	vf, ok := versionedFormats[format]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (one of %s)", format, strings.Join(Formats, ", "))
	}
	steps, err := Plan(cat, names, queries, cqrsPrefix)
	if err != nil {
		return nil, err
	}
	units := Units(steps)
	have, maxVersion, err := heldUnits(vf, existing, units)
	if err != nil {
		return nil, err
	}
	var out, added []File
	var addedUnits []Unit
	for _, u := range units {
		h, ok := have[u.ID()]
		if !ok {
			maxVersion++
			f := File{Name: vf.name(maxVersion, u.Slug()), Content: vf.render(cat, u)}
			out, added, addedUnits = append(out, f), append(added, f), append(addedUnits, u)
			continue
		}
		if err := sameUnit(cat, vf, u, h); err != nil {
			return nil, err
		}
	}
	if format == "liquibase" {
		log, err := liquibaseChangelog(cat, existing, addedUnits, added)
		if err != nil {
			return nil, err
		}
		if log != nil {
			out = append(out, *log)
		}
	}
	return out, nil
}

// heldUnits maps unit IDs to the existing files holding them and finds the
// highest version among the tool's files.
func heldUnits(vf versioned, existing []File, units []Unit) (map[string]held, int64, error) {
	bySlug := map[string]string{}
	for _, u := range units {
		bySlug[u.Slug()] = u.ID()
	}
	have := map[string]held{}
	var maxVersion int64
	for _, f := range existing {
		m := vf.migration.FindStringSubmatch(f.Name)
		if m == nil {
			continue
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: version %s: %w", f.Name, m[1], err)
		}
		maxVersion = max(maxVersion, v)
		id, legacy := unitOf(f, bySlug)
		if id == "" {
			continue // the user's own migration: only its version counts
		}
		if prev, dup := have[id]; dup {
			return nil, 0, &ExportConflictError{File: f.Name, Unit: id, Reason: "the unit is also held by " + prev.file.Name + "; keep one of them"}
		}
		have[id] = held{file: f, version: v, legacy: legacy}
	}
	return have, maxVersion, nil
}

// unitOf reads a file's unit ID from its header; a file exported before
// units carried IDs is matched by its name's slug.
func unitOf(f File, bySlug map[string]string) (id string, legacy bool) {
	for _, line := range strings.SplitN(f.Content, "\n", 4) {
		if rest, ok := strings.CutPrefix(line, UnitHeaderPrefix); ok {
			return strings.TrimSpace(rest), false
		}
	}
	if !strings.HasPrefix(f.Content, "-- Tidemark schema for ") {
		return "", false
	}
	_, slug, _ := strings.Cut(strings.TrimPrefix(f.Name, "V"), "_")
	slug = strings.TrimPrefix(slug, "_") // flyway's double underscore
	slug = strings.TrimSuffix(strings.TrimSuffix(slug, ".sql"), ".up")
	return bySlug[slug], true
}

// sameUnit refuses a held file whose content the unit would change.
func sameUnit(cat *dialect.Catalogue, vf versioned, u Unit, h held) error {
	want := vf.render(cat, u)
	got := h.file.Content
	if h.legacy { // older header lines carried the plugin version: compare the SQL only
		want, got = withoutComments(want), withoutComments(got)
	}
	if want == got {
		return nil
	}
	reason := "its content would change, and an applied migration is never edited"
	if u.Script == dialect.ScriptQueryTable {
		reason += "; a query table's columns are fixed once created: give the changed projection a new table (see docs/migrations.md)"
	} else {
		reason += "; the dialect's DDL for it differs from when it was exported (another dialect or plugin version?)"
	}
	return &ExportConflictError{File: h.file.Name, Unit: u.ID(), Reason: reason}
}

func withoutComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || (strings.HasPrefix(t, "--") && !strings.HasPrefix(t, "-- +goose")) {
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// liquibaseChangelog appends a changeSet per added file to the existing
// changelog (or writes a new one listing every unit file present). Nil when
// nothing changes.
func liquibaseChangelog(cat *dialect.Catalogue, existing []File, units []Unit, added []File) (*File, error) {
	var log string
	var files []File
	var ids []string
	for _, f := range existing {
		if f.Name == LiquibaseChangelog {
			log = f.Content
		}
	}
	if log == "" {
		log = "databaseChangeLog:\n"
		// A directory of unit files without a changelog: list them all.
		var old []File
		for _, f := range existing {
			if id, _ := unitOf(f, nil); id != "" && versionedFormats["liquibase"].migration.MatchString(f.Name) {
				old = append(old, f)
			}
		}
		sort.Slice(old, func(i, j int) bool { return old[i].Name < old[j].Name })
		for _, f := range old {
			id, _ := unitOf(f, nil)
			files, ids = append(files, f), append(ids, id)
		}
	} else if !strings.HasPrefix(log, "databaseChangeLog:") {
		return nil, &ExportConflictError{File: LiquibaseChangelog, Unit: "changelog", Reason: "it does not start with databaseChangeLog:, so changeSets cannot be appended"}
	}
	for i, f := range added {
		files, ids = append(files, f), append(ids, units[i].ID())
	}
	if len(files) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(log)
	if !strings.HasSuffix(log, "\n") {
		b.WriteString("\n")
	}
	for i, f := range files {
		fmt.Fprintf(&b, "  - changeSet:\n      id: %s\n      author: tidemark\n      changes:\n        - sqlFile:\n            path: %s\n            relativeToChangelogFile: true\n            splitStatements: true\n            stripComments: false\n            endDelimiter: %s\n",
			strconv.Quote(ids[i]), f.Name, strconv.Quote(LiquibaseEndDelimiter(cat)))
	}
	return &File{Name: LiquibaseChangelog, Content: b.String()}, nil
}

// LiquibaseEndDelimiter is the dialect's terminator as Liquibase's
// endDelimiter: one character is compared literally, a longer one is a
// regular expression, so it is quoted.
func LiquibaseEndDelimiter(cat *dialect.Catalogue) string {
	t := cat.Identity.Terminator()
	if len(t) == 1 {
		return t
	}
	return regexp.QuoteMeta(t)
}
