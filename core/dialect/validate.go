package dialect

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// ErrCatalogue is wrapped by *CatalogueError.
var ErrCatalogue = errors.New("catalogue refused")

// CatalogueProblem is one thing wrong with a catalogue.
type CatalogueProblem struct {
	// Statement is the statement ID or the catalogue field at fault
	// ("event_insert", "introspection.columns", "positions", …).
	Statement string
	// Name is the bind, table or setting at fault; empty when the whole
	// statement is (missing, unknown).
	Name string
	// Reason says what is wrong, in words.
	Reason string
}

// String is "statement: name: reason" (without the parts that are empty).
func (p CatalogueProblem) String() string {
	s := p.Statement
	if p.Name != "" {
		s += ": " + p.Name
	}
	return s + ": " + p.Reason
}

// CatalogueError is a catalogue that (*Catalogue).Validate refused, with
// every problem found.
type CatalogueError struct {
	Dialect  string
	Problems []CatalogueProblem
}

// Error names the dialect and every problem.
func (e *CatalogueError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("dialect %s: catalogue refused: %s", e.Dialect, strings.Join(parts, "; "))
}

// Unwrap makes errors.Is(err, ErrCatalogue) hold.
func (e *CatalogueError) Unwrap() error { return ErrCatalogue }

// Validate is the one check of a catalogue, run by Load (and InProcess),
// engine.Open and the conformance suite's catalogue test: what can be
// checked without a database. A catalogue of another contract version is a
// *ContractVersionError; anything else wrong is one *CatalogueError naming
// every statement and name at fault:
//
//   - every statement the strategy and settings require is present;
//   - every statement ID is one of the contract's (Specs), or the dialect's
//     own under its name ("<name>.…", never run by the core);
//   - every template's #{binds} are ones the core passes for it and its
//     ${tables} ones it may use (StatementSpec);
//   - the event insert, scripts, introspection, schema lock, naming,
//     position settings and isolation levels are complete and known.
func (c *Catalogue) Validate() error {
	if v := c.Identity.ContractVersion; v != ContractVersion {
		return &ContractVersionError{Path: c.Identity.Name, Host: ContractVersion, Plugin: v}
	}
	v := validator{c: c}
	v.identity()
	v.statements()
	v.eventInsert()
	v.captureInsert()
	v.readModelInsert()
	v.templates()
	v.settings()
	v.completeness()
	if len(v.problems) == 0 {
		return nil
	}
	name := c.Identity.Name
	if name == "" {
		name = "(unnamed)"
	}
	return &CatalogueError{Dialect: name, Problems: v.problems}
}

type validator struct {
	c        *Catalogue
	problems []CatalogueProblem
}

func (v *validator) add(stmt, name, reason string, args ...any) {
	v.problems = append(v.problems, CatalogueProblem{Statement: stmt, Name: name, Reason: fmt.Sprintf(reason, args...)})
}

func (v *validator) identity() {
	if v.c.Identity.Name == "" {
		v.add("identity", "name", "empty")
	}
	switch v.c.Positions {
	case CounterRow, SequenceXIDHorizon:
	default:
		v.add("positions", string(v.c.Positions), "unknown strategy (want %s or %s)", CounterRow, SequenceXIDHorizon)
	}
	if len(v.c.Scripts) == 0 {
		v.add("scripts", "", "none")
	}
	for _, sc := range v.c.Scripts {
		if len(sc.Statements) == 0 {
			v.add("script "+sc.Name, "", "no statements")
		}
		for _, st := range sc.Statements {
			v.ddl("script "+sc.Name, st)
		}
	}
	if v.c.Introspection.TableExists == "" {
		v.add("introspection.table_exists", "", "missing")
	}
	if (v.c.SchemaLock.Acquire == "") != (v.c.SchemaLock.Release == "") {
		v.add("schema_lock", "", "acquire and release go together")
	}
	v.conflictRead()
	switch v.c.Facts.TextUnit {
	case TextCharacters, TextUTF16, TextBytes:
	default:
		v.add("facts", "text_unit", "unknown unit %q (want %q, %q or none for characters)", v.c.Facts.TextUnit, TextUTF16, TextBytes)
	}
	if n := v.c.Facts.AggregateIDLength; n != 0 && n < 255 {
		v.add("facts", "aggregate_id_length", "%d is under the spec's 255", n)
	}
	if d := v.c.Facts.TimeDigits; d != nil && (*d < 0 || *d > 9) {
		v.add("facts", "time_digits", "%d is out of range (0–9)", *d)
	}
	switch v.c.Naming.IndexScope {
	case IndexScopeRelations, IndexScopeSchema, IndexScopeTable:
	default:
		v.add("naming.index_scope", string(v.c.Naming.IndexScope), "unknown scope")
	}
}

// statements checks presence, known IDs and each template against its spec.
func (v *validator) statements() {
	for _, sp := range Specs() {
		if !sp.For(v.c.Positions) {
			continue
		}
		if strings.TrimSpace(v.c.Statements[sp.ID]) == "" && v.required(sp) {
			v.add(string(sp.ID), "", "missing (required for %s)", v.c.Positions)
		}
	}
	ids := make([]string, 0, len(v.c.Statements))
	for id := range v.c.Statements {
		ids = append(ids, string(id))
	}
	sort.Strings(ids)
	own := v.c.Identity.Name + "."
	for _, id := range ids {
		tmpl := v.c.Statements[StatementID(id)]
		sp, ok := Spec(StatementID(id))
		switch {
		case ok:
			v.template(id, tmpl, sp)
		case v.c.Identity.Name != "" && strings.HasPrefix(id, own):
			// The dialect's own statement (tests, tooling): never run by
			// the core, so no binds to check.
		default:
			v.add(id, "", "unknown statement (not in the contract; a dialect's own statements are named %q)", own+"…")
		}
	}
}

// required tells whether a spec's statement must be present, settings
// included.
func (v *validator) required(sp StatementSpec) bool {
	if sp.ID == PositionLock {
		return v.c.PositionSettings.CounterLock == CounterLockFirst
	}
	return !sp.Optional
}

// template checks one template's binds and tables against sp.
func (v *validator) template(where, tmpl string, sp StatementSpec) {
	for _, b := range Binds(tmpl) {
		if !slices.Contains(sp.Binds, b) {
			v.add(where, "#{"+b+"}", "not a bind the core passes (it passes %s)", list("#{", sp.Binds))
		}
	}
	for _, t := range Placeholders(tmpl) {
		if !slices.Contains(sp.Tables, t) {
			v.add(where, "${"+t+"}", "not a table this statement may use (it may use %s)", list("${", sp.Tables))
		}
	}
	rest := bindPlaceholder.ReplaceAllString(identPlaceholder.ReplaceAllString(tmpl, ""), "")
	if i := strings.Index(rest, "#{"); i >= 0 {
		v.add(where, rest[i:min(len(rest), i+20)], "malformed bind (names are lower case letters and _)")
	}
}

func list(open string, names []string) string {
	if len(names) == 0 {
		return "none"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = open + n + "}"
	}
	return strings.Join(out, ", ")
}

// eventInsert checks the event insert against its spec and the strategy.
func (v *validator) eventInsert() {
	ins := v.c.EventInsert
	if ins.Head == "" || ins.Row == "" {
		v.add("event_insert", "", "head and row are required")
		return
	}
	v.template("event_insert", ins.Head+ins.Row+ins.Tail, eventInsertSpec)
	if ins.NextSequence != "" {
		v.template("event_insert.next_sequence", ins.NextSequence, eventInsertSpec)
	}
	if ins.CheckedSequence != "" {
		v.template("event_insert.checked_sequence", ins.CheckedSequence, eventInsertSpec)
	}
	v.computedTail()
	v.rowPositions("event_insert", ins, "global_position")
}

// captureInsert checks the capture topic's insert and readModelInsert the
// read-model topics': head and row, the spec, the strategy's position
// bind, and none of the event insert's sequence expressions.
func (v *validator) captureInsert() {
	v.topicInsert("capture_insert", v.c.CaptureInsert, captureInsertSpec, "global_position")
}

func (v *validator) readModelInsert() {
	v.topicInsert("read_model_insert", v.c.ReadModelInsert, readModelInsertSpec, "topic_position")
}

func (v *validator) topicInsert(name string, ins RowInsert, spec StatementSpec, posBind string) {
	if ins.Head == "" || ins.Row == "" {
		v.add(name, "", "head and row are required")
		return
	}
	v.template(name, ins.Head+ins.Row+ins.Tail, spec)
	if ins.NextSequence != "" || ins.CheckedSequence != "" || ins.ComputedTail != "" {
		v.add(name, "", "next_sequence, checked_sequence and computed_tail apply to the event insert only")
	}
	v.rowPositions(name, ins, posBind)
}

// rowPositions checks who gives a RowInsert's rows their positions
// (#{posBind}): the core under CounterRow (the row binds it), the insert
// under SequenceXIDHorizon (it must not); and that MaxRows is not negative.
func (v *validator) rowPositions(name string, ins RowInsert, posBind string) {
	binds := Binds(ins.Row)
	switch {
	case v.c.Positions == CounterRow && !slices.Contains(binds, posBind):
		v.add(name, "#{"+posBind+"}", "a %s row binds the position the core allocated", CounterRow)
	case v.c.Positions == SequenceXIDHorizon && slices.Contains(binds, posBind):
		v.add(name, "#{"+posBind+"}", "under %s the database draws the position in the insert", SequenceXIDHorizon)
	}
	if ins.MaxRows < 0 {
		v.add(name, "max_rows", "negative")
	}
}

// computedTail checks EventInsert.ComputedTail: a CounterRow declaration
// that needs NextSequence (the expression whose result it returns).
func (v *validator) computedTail() {
	ins := v.c.EventInsert
	if ins.ComputedTail == "" {
		return
	}
	v.template("event_insert.computed_tail", ins.ComputedTail, eventInsertSpec)
	if ins.NextSequence == "" {
		v.add("event_insert", "computed_tail", "needs next_sequence: it returns the sequence number next_sequence computes")
	}
	if v.c.Positions != CounterRow {
		v.add("event_insert", "computed_tail", "only a %s insert needs it (under %s tail returns the rows)", CounterRow, SequenceXIDHorizon)
	}
}

// templates checks the templates outside Statements.
func (v *validator) templates() {
	c := v.c
	byName := map[string]string{
		"introspection.table_exists":    c.Introspection.TableExists,
		"introspection.sequence_exists": c.Introspection.SequenceExists,
		"introspection.columns":         c.Introspection.Columns,
		"introspection.indexes":         c.Introspection.Indexes,
		"schema_lock.acquire":           c.SchemaLock.Acquire,
		"schema_lock.release":           c.SchemaLock.Release,
		"query_columns.index_exists":    c.QueryColumns.IndexExists,
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names) // problems in a fixed order
	for _, name := range names {
		if tmpl := byName[name]; tmpl != "" {
			v.template(name, tmpl, templateSpecs[name])
		}
	}
}

// settings checks the position settings and isolation levels.
func (v *validator) settings() {
	ps := v.c.PositionSettings
	switch ps.CounterLock {
	case CounterLockUpdate, CounterLockFirst:
	default:
		v.add("position_settings", "counter_lock", "unknown form %q (want %q or %q)", ps.CounterLock, CounterLockUpdate, CounterLockFirst)
	}
	if v.c.Positions != CounterRow && (ps.CounterLock != "" || ps.AllocateFirst || ps.AllocatedInResult) {
		v.add("position_settings", "", "counter settings given for %s", v.c.Positions)
	}
	iso := v.c.Isolation
	for _, op := range []struct {
		name  string
		level IsolationLevel
	}{{"append", iso.Append}, {"hwm", iso.HWM}, {"read", iso.Read}} {
		switch op.level {
		case IsolationDefault, IsolationReadUncommitted, IsolationReadCommitted, IsolationRepeatableRead, IsolationSnapshot, IsolationSerializable:
		default:
			v.add("isolation", op.name, "unknown level %q", op.level)
		}
	}
}

// Binds returns the distinct #{…} bind names of a template, sorted.
func Binds(template string) []string {
	seen := map[string]bool{}
	for _, m := range bindPlaceholder.FindAllStringSubmatch(template, -1) {
		seen[m[1]] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// completeness checks that the catalogue is whole, before any SQL runs:
// the identity, the standard scripts in creation order, the query-column
// templates, the introspection queries and the error rules.
func (v *validator) completeness() {
	c := v.c
	id := c.Identity
	for _, f := range []struct{ name, val string }{
		{"version", id.Version}, {"driver_name", id.DriverName}, {"dsn_hint", id.DSNHint}, {"quote_open", id.QuoteOpen},
	} {
		if f.val == "" {
			v.add("identity", f.name, "empty")
		}
	}
	if id.MaxIdentifierLength < 30 {
		v.add("identity", "max_identifier_length", "%d, want at least 30 (the spec's table names)", id.MaxIdentifierLength)
	}
	switch id.Placeholder {
	case PlaceholderQuestion, PlaceholderDollar, PlaceholderAtP, PlaceholderColon:
	default:
		v.add("identity", "placeholder", "unknown style %q", id.Placeholder)
	}
	std := StandardScripts(ObjectTable)
	if len(c.Scripts) != len(std) {
		v.add("scripts", "", "%d scripts, want the %d standard ones", len(c.Scripts), len(std))
	}
	for i, sc := range c.Scripts {
		if i < len(std) && sc.Name != std[i].Name {
			v.add("scripts", sc.Name, "script %d, want %s (creation order)", i, std[i].Name)
		}
	}
	for _, k := range []QueryFieldKind{KindText, KindInteger, KindDecimal, KindDate, KindTime, KindInstant, KindBoolean} {
		if c.QueryColumns.Types[k] == "" {
			v.add("query_columns.types", string(k), "missing")
		}
	}
	if c.QueryColumns.Index == "" || c.QueryColumns.UniqueIndex == "" || c.QueryColumns.Column == "" {
		v.add("query_columns", "", "column, index and unique_index are required")
	}
	if c.Introspection.Columns == "" || c.Introspection.Indexes == "" {
		v.add("introspection", "", "columns and indexes are required")
	}
	classes := map[ErrorClass]bool{}
	for i, r := range c.Errors {
		classes[r.Class] = true
		for _, p := range []struct{ name, re string }{{"message_pattern", r.MessagePattern}, {"constraint_pattern", r.ConstraintPattern}} {
			if _, err := regexp.Compile(p.re); err != nil {
				v.add(fmt.Sprintf("errors[%d]", i), p.name, "%v", err)
			}
		}
	}
	for _, need := range []ErrorClass{ErrUniqueViolation, ErrDuplicateEventID} {
		if !classes[need] {
			v.add("errors", string(need), "no rule")
		}
	}
}

// ddlPlaceholders are the ${…} names DDL may use besides the spec's table
// names (DefaultNames).
var ddlPlaceholders = []string{"position_table", "query_table", "query_columns", "column", "type", "precision", "scale"}

// ddl checks a DDL template: known ${tables}, no binds.
func (v *validator) ddl(where, tmpl string) {
	for _, p := range Placeholders(tmpl) {
		if _, ok := DefaultNames[p]; !ok && !slices.Contains(ddlPlaceholders, p) {
			v.add(where, "${"+p+"}", "not a table the spec names")
		}
	}
	for _, b := range Binds(tmpl) {
		v.add(where, "#{"+b+"}", "DDL takes no binds")
	}
}

// conflictRead checks where a refused append's version is read: a locking
// engine's read on another connection would wait for its own caller.
func (v *validator) conflictRead() {
	switch cr := v.c.Locks.ConflictRead; cr {
	case "", ConflictReadPool:
		if v.c.Locks.ReadersWaitForWriters {
			v.add("locks.conflict_read", string(cr), "readers wait for writers: a refused append's version read on another connection waits for its own transaction (declare %s)", ConflictReadInTransaction)
		}
	case ConflictReadInTransaction:
	default:
		v.add("locks.conflict_read", string(cr), "unknown (want %s or %s)", ConflictReadPool, ConflictReadInTransaction)
	}
}
