package dialect

import (
	"strings"
	"testing"
)

// TestAreasANSIStatementsAreTheirOwn checks the table of areas: every ANSI
// statement of an area is a spec of that same area.
func TestAreasANSIStatementsAreTheirOwn(t *testing.T) {
	for _, a := range areas {
		own := map[StatementID]bool{}
		for _, list := range a.specs {
			for _, s := range list {
				own[s.ID] = true
			}
		}
		for id := range a.ansi() {
			if !own[id] {
				t.Errorf("area %s: ANSI statement %s is not one of its specs", a.name, id)
			}
		}
	}
}

// TestIndexSpecsRefusesDuplicates checks the one duplicate check.
func TestIndexSpecsRefusesDuplicates(t *testing.T) {
	dup := []area{
		{name: "one", specs: [][]StatementSpec{{{ID: "x.a"}}}},
		{name: "two", specs: [][]StatementSpec{{{ID: "x.b"}, {ID: "x.a"}}}},
	}
	_, err := indexSpecs(dup)
	if err == nil || !strings.Contains(err.Error(), "x.a declared twice (areas one and two)") {
		t.Fatalf("indexSpecs(duplicate) = %v", err)
	}
	if _, err := indexSpecs(areas); err != nil {
		t.Fatal(err)
	}
}
