package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// ErrNameConflict is wrapped by every *NameConflictError.
var ErrNameConflict = errors.New("name conflict")

// NameConflictError reports two configured or derived names that are one
// object to the engine: two spellings the engine does not tell apart, or one
// name given two roles (a consumer table named like an event table, an
// event table that is its own snapshot table, two projections whose names
// normalise to one query table).
type NameConflictError struct {
	Name        string // the name as the first source spells it
	Source      string // where it came from, e.g. "${event_store_table}"
	Other       string // the other spelling (equal to Name for a role conflict)
	OtherSource string
	Dialect     string
	Reason      string
}

func (e *NameConflictError) Error() string {
	if e.Name != e.Other {
		return fmt.Sprintf("names %q (%s) and %q (%s) are one object on %s: %s; use one spelling or two distinct names",
			e.Name, e.Source, e.Other, e.OtherSource, e.Dialect, e.Reason)
	}
	return fmt.Sprintf("name %q is used by %s and by %s on %s: %s; give each its own name",
		e.Name, e.Source, e.OtherSource, e.Dialect, e.Reason)
}

// Unwrap makes errors.Is(err, ErrNameConflict) and
// errors.Is(err, ErrInvalidIdentifier) hold.
func (e *NameConflictError) Unwrap() []error { return []error{ErrNameConflict, ErrInvalidIdentifier} }

// ErrReservedWord is wrapped by every *ReservedWordError.
var ErrReservedWord = errors.New("reserved word")

// ReservedWordError reports a table, index or column name that is a
// reserved word of the engine (Catalogue.Naming.ReservedWords).
type ReservedWordError struct {
	Name    string
	Source  string
	Dialect string
}

func (e *ReservedWordError) Error() string {
	return fmt.Sprintf("name %q (%s) is a reserved word of %s; choose another name (names are never quoted)", e.Name, e.Source, e.Dialect)
}

// Unwrap makes errors.Is(err, ErrReservedWord) and
// errors.Is(err, ErrInvalidIdentifier) hold.
func (e *ReservedWordError) Unwrap() []error { return []error{ErrReservedWord, ErrInvalidIdentifier} }

// nameKind separates relations (tables, sequences) from index and
// constraint names, which engines keep in other namespaces.
type nameKind int

const (
	kindRelation nameKind = iota
	kindIndex
	kindColumn
)

// nameUse is one use of a physical name in the plan. Two uses with the same
// role are one object (aggregates sharing an event table; a derived index
// name repeated in a guard).
type nameUse struct {
	name   string
	full   string // a derived name before the naming rule shortened it; "" or name when it was not
	kind   nameKind
	table  string // for an index: the table it belongs to
	role   string
	source string
}

// namePlan collects every name a Plan creates or refers to, so it can be
// checked as a whole before any SQL runs.
type namePlan struct {
	cat  *dialect.Catalogue
	uses []nameUse
}

func (p *namePlan) add(u nameUse) { p.uses = append(p.uses, u) }

// addNames records the resolved tables with their roles. The shared event,
// snapshot and saga tables have the same role as the per-aggregate ones: an
// aggregate may name the shared table explicitly.
func (p *namePlan) addNames(names *Names) {
	roleOf := map[string]string{
		"event_store_table":         "event table",
		"aggregate_snapshots_table": "snapshot table",
		"saga_instances_table":      "saga instance table",
	}
	phs := make([]string, 0, len(names.Shared))
	for ph := range names.Shared {
		phs = append(phs, ph)
	}
	sort.Strings(phs)
	for _, ph := range phs {
		role := roleOf[ph]
		if role == "" {
			role = "${" + ph + "}"
		}
		p.add(nameUse{name: names.Shared[ph], kind: kindRelation, role: role, source: "${" + ph + "}"})
	}
	types := make([]string, 0, len(names.ByAggregate))
	for t := range names.ByAggregate {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		at := names.ByAggregate[t]
		p.add(nameUse{name: at.Events, kind: kindRelation, role: "event table", source: "event table of aggregate " + t})
		p.add(nameUse{name: at.Snapshots, kind: kindRelation, role: "snapshot table", source: "snapshot table of aggregate " + t})
	}
	for _, s := range names.SagaTables {
		p.add(nameUse{name: s, kind: kindRelation, role: "saga instance table", source: "saga table " + s})
	}
}

// addDerived records every identifier of a template built around a
// placeholder (idx_${event_store_table}_global, idx_${query_table}_${column})
// as filled with values.
func (p *namePlan) addDerived(tmpl string, values map[string]string, source string) {
	for _, tok := range derivedIdentifier.FindAllString(tmpl, -1) {
		phs := dialect.Placeholders(tok)
		if len(phs) == 1 && tok == "${"+phs[0]+"}" || nonIdentifier[strings.Join(phs, ",")] {
			continue // a plain table reference or SQL text, not a new name
		}
		got, full, err := physicalName(p.cat, tok, values)
		if err != nil {
			continue // reported by fill
		}
		filled := make([]string, len(phs))
		for i, ph := range phs {
			filled[i] = values[ph]
		}
		p.add(nameUse{name: got, full: full, kind: kindIndex, table: tableOf(tok, values),
			role: tok + " " + strings.Join(filled, ","), source: tok + " of " + source})
	}
}

// tableOf is the table a derived name belongs to: the value of its first
// placeholder other than ${column}.
func tableOf(tok string, values map[string]string) string {
	for _, ph := range dialect.Placeholders(tok) {
		if ph != "column" {
			return values[ph]
		}
	}
	return ""
}

// check refuses reserved words and any two uses that are one object to the
// engine but differ in spelling or role.
func (p *namePlan) check() error {
	n := p.cat.Naming
	reserved := make(map[string]bool, len(n.ReservedWords))
	for _, w := range n.ReservedWords {
		reserved[strings.ToUpper(w)] = true
	}
	seen := map[string]nameUse{}
	for _, u := range p.uses {
		if reserved[strings.ToUpper(u.name)] {
			return &ReservedWordError{Name: u.name, Source: u.source, Dialect: p.cat.Identity.Name}
		}
		if u.kind == kindColumn {
			continue
		}
		key := p.key(u)
		prev, ok := seen[key]
		if !ok {
			seen[key] = u
			continue
		}
		if prev.name == u.name && prev.role == u.role {
			continue
		}
		err := &NameConflictError{Name: prev.name, Source: prev.source, Other: u.name, OtherSource: u.source, Dialect: p.cat.Identity.Name}
		switch {
		case shortenedUse(prev) || shortenedUse(u):
			err.Reason = fmt.Sprintf("the dialect's naming rule (%s) shortens %s to this name, which another name already is; rename one of the tables",
				p.cat.Naming.Shorten, fullNames(prev, u))
		case prev.name != u.name:
			err.Reason = "the engine does not tell these names apart by case"
		case prev.kind != u.kind:
			err.Reason = "index and table names share one namespace"
		default:
			err.Reason = "one physical object cannot serve two roles"
		}
		return err
	}
	return nil
}

// key is the name as the engine compares it, within its namespace.
func (p *namePlan) key(u nameUse) string {
	n := p.cat.Naming
	if u.kind == kindRelation {
		return "r:" + fold(u.name, !n.TablesCaseSensitive)
	}
	name := fold(u.name, !n.IndexesCaseSensitive)
	switch n.IndexScope {
	case dialect.IndexScopeTable:
		return "i:" + fold(u.table, !n.TablesCaseSensitive) + ":" + name
	case dialect.IndexScopeSchema:
		return "i:" + name
	}
	return "r:" + name
}

// fold compares ASCII names without case (identifiers are ASCII: see
// ValidateIdentifier).
func fold(s string, insensitive bool) string {
	if insensitive {
		return strings.ToUpper(s)
	}
	return s
}

// shortenedUse is true when the naming rule shortened u's name.
func shortenedUse(u nameUse) bool { return u.full != "" && u.full != u.name }

// fullNames lists the full names behind two uses, for a conflict message.
func fullNames(a, b nameUse) string {
	var out []string
	for _, u := range []nameUse{a, b} {
		if shortenedUse(u) {
			out = append(out, u.full)
		}
	}
	return strings.Join(out, " and ")
}

// ErrNamingRule is wrapped by every *NamingRuleError.
var ErrNamingRule = errors.New("naming rule")

// NamingRuleError reports a catalogue whose naming rule (Naming.Shorten)
// the core cannot apply: an unknown rule, or a limit too small for it.
type NamingRuleError struct {
	Dialect string
	Rule    dialect.ShortenRule
	Limit   int
	Reason  string
}

func (e *NamingRuleError) Error() string {
	return fmt.Sprintf("dialect %s: naming rule %q with an identifier limit of %d: %s", e.Dialect, e.Rule, e.Limit, e.Reason)
}

// Unwrap makes errors.Is(err, ErrNamingRule) hold.
func (e *NamingRuleError) Unwrap() error { return ErrNamingRule }

// hashDigits is how many hexadecimal digits of SHA-256 a shortened name
// keeps: 8 digits are 32 bits, so two names of one schema (a few hundred
// at most) collide with a probability below 1e-5, and the naming plan
// refuses the rare collision instead of creating one object for two.
const hashDigits = 8

// minShortenLimit is the smallest limit ShortenHash works with: the 9
// characters of "_" and the hash, and room for a prefix that still says
// what the object is ("idx_" or "pk_" and a few characters of the table).
const minShortenLimit = 18

// DerivedName is the name the engine gets for a derived object (an index
// or constraint) whose full name, placeholders filled, is full: full itself
// when it fits Identity.MaxIdentifierLength or the catalogue declares no
// naming rule, otherwise the rule's shortened form (see
// dialect.ShortenHash). The conformance suite and every other reader of
// derived names call it to compare with what the DDL created.
func DerivedName(cat *dialect.Catalogue, full string) (string, error) {
	limit := cat.Identity.MaxIdentifierLength
	rule := cat.Naming.Shorten
	if limit <= 0 || len(full) <= limit || rule == dialect.ShortenNever {
		return full, nil
	}
	if err := checkNamingRule(cat); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(catalogueName(cat, full)))
	return full[:limit-hashDigits-1] + "_" + hex.EncodeToString(sum[:])[:hashDigits], nil
}
