package dialect

import (
	"fmt"
	"maps"
	"sort"
)

// StatementID names a statement of the catalogue. Each ID is declared once,
// as data, by a StatementSpec in the statements_<area>.go file of its area:
// the strategy it belongs to, the #{…} binds the core passes, the ${…}
// tables it may use and the columns it returns. The doc comment of each ID
// says what the statement must do.
type StatementID string

// StatementSpec is the contract of one statement. (*Catalogue).Validate
// checks every template against its spec at load: a #{bind} the core does
// not pass or a ${table} the statement may not use is refused, naming the
// statement and the name.
type StatementSpec struct {
	ID StatementID
	// Strategy is the position strategy the statement belongs to: "" for
	// every strategy, CounterRow or SequenceXIDHorizon for one only. A
	// statement of another strategy is never run.
	Strategy PositionStrategy
	// Optional statements may be empty; the others are required for their
	// strategy. Required can also depend on a setting (see requiredWhen).
	Optional bool
	// Binds are the #{names} the core passes; a template may use any subset,
	// in any order, each any number of times.
	Binds []string
	// Tables are the ${placeholders} the template may use. Shared tables
	// are filled from the configured names, the per-call ones (position_table,
	// event_store_table, aggregate_snapshots_table) by the caller.
	Tables []string
	// Returns are the columns of the rows it returns, in order; nil for a
	// statement whose rows the core does not read.
	Returns []string
}

// area is one area of the contract: the specs of its statements and ANSI's
// text of them (its ansi_<area>.go). A new area adds its row to areas.
type area struct {
	name  string
	specs [][]StatementSpec
	ansi  func() map[StatementID]string
}

// areas are every area of the contract, in declaration order: the one
// place statements are registered.
var areas = []area{
	{"event store", [][]StatementSpec{schemaStatements, eventStoreStatements, positionStatements, hwmStatements}, ansiStatements},
	{"topic", [][]StatementSpec{topicStatements}, ansiTopicStatements},
	{"rmtopic", [][]StatementSpec{rmTopicStatements}, ansiRMTopicStatements},
	{"consumer", [][]StatementSpec{consumerStatements, replayStatements}, ansiConsumerStatements},
	{"skipped", [][]StatementSpec{skippedStatements}, ansiSkippedStatements},
	{"lease", [][]StatementSpec{leaseStatements, leaseStatusStatements}, ansiLeaseStatements},
	{"consumer admin", [][]StatementSpec{consumerAdminStatements}, ansiConsumerAdminStatements},
	{"undelivered", [][]StatementSpec{undeliveredStatements, incompleteStatements}, ansiUndeliveredStatements},
	{"saga", [][]StatementSpec{sagaStatements, publicationStatements}, ansiSagaStatements},
}

// specByID indexes every area's specs; an ID declared twice is a bug of the
// contract, caught when the package loads.
var specByID = func() map[StatementID]StatementSpec {
	m, err := indexSpecs(areas)
	if err != nil {
		panic(err)
	}
	return m
}()

// indexSpecs indexes the specs of as by ID, refusing an ID declared twice.
func indexSpecs(as []area) (map[StatementID]StatementSpec, error) {
	m := map[StatementID]StatementSpec{}
	in := map[StatementID]string{}
	for _, a := range as {
		for _, list := range a.specs {
			for _, s := range list {
				if prev, dup := in[s.ID]; dup {
					return nil, fmt.Errorf("dialect: statement %s declared twice (areas %s and %s)", s.ID, prev, a.name)
				}
				m[s.ID], in[s.ID] = s, a.name
			}
		}
	}
	return m, nil
}

// ansiAreaStatements is the union of every area's ANSI statements.
func ansiAreaStatements() map[StatementID]string {
	out := map[StatementID]string{}
	for _, a := range areas {
		maps.Copy(out, a.ansi())
	}
	return out
}

// Specs returns every statement spec, sorted by ID.
func Specs() []StatementSpec {
	out := make([]StatementSpec, 0, len(specByID))
	for _, s := range specByID {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Spec returns the spec of id and whether it is a statement of the contract.
func Spec(id StatementID) (StatementSpec, bool) {
	s, ok := specByID[id]
	return s, ok
}

// For tells whether the statement belongs to strategy s.
func (sp StatementSpec) For(s PositionStrategy) bool {
	return sp.Strategy == "" || sp.Strategy == s
}

// RequiredStatements lists, sorted, the statements every catalogue with
// strategy s must carry (derived from the specs; settings may require more,
// see (*Catalogue).Validate).
func RequiredStatements(s PositionStrategy) []StatementID {
	var ids []StatementID
	for _, sp := range Specs() {
		if !sp.Optional && sp.For(s) {
			ids = append(ids, sp.ID)
		}
	}
	return ids
}

// SpecArea is one area of the contract as its specs: what generators of
// typed statement calls read (one file per area).
type SpecArea struct {
	// Name is the area's name ("event store", "consumer admin", …).
	Name string
	// Specs are the area's statement specs, in declaration order.
	Specs []StatementSpec
}

// SpecAreas returns every area of the contract with its specs, in the
// order of the areas table.
func SpecAreas() []SpecArea {
	out := make([]SpecArea, 0, len(areas))
	for _, a := range areas {
		sa := SpecArea{Name: a.name}
		for _, list := range a.specs {
			sa.Specs = append(sa.Specs, list...)
		}
		out = append(out, sa)
	}
	return out
}
