package schema

import (
	"strconv"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// checkQueryTablesDistinct refuses two projections whose query tables
// resolve to one name: a query table holds one projection's read models.
// The error names both projections and both column sets. Spellings that
// differ only where the engine does not tell names apart are the naming
// plan's to refuse.
func checkQueryTablesDistinct(cat *dialect.Catalogue, queries []QueryTable, cqrsPrefix string) error {
	seen := map[string]QueryTable{}
	for _, q := range queries {
		name, err := ResolveQueryTable(q, cqrsPrefix)
		if err != nil {
			return err
		}
		if o, ok := seen[name]; ok {
			return &NameConflictError{Name: name, Other: name, Dialect: cat.Identity.Name,
				Source:      "query table of projection " + strconv.Quote(o.Projection) + " (" + columnSet(o.Fields) + ")",
				OtherSource: "query table of projection " + strconv.Quote(q.Projection) + " (" + columnSet(q.Fields) + ")",
				Reason:      "a query table holds the read models of one projection"}
		}
		seen[name] = q
	}
	return nil
}

// columnSet is a readable list of a query table's columns.
func columnSet(fs []QueryField) string {
	parts := []string{"read_model_id", "message_id"}
	for _, f := range fs {
		s := f.Column + " " + string(f.Kind)
		if f.Kind == dialect.KindDecimal {
			s += "(" + strconv.Itoa(f.Precision) + "," + strconv.Itoa(f.Scale) + ")"
		}
		if f.Unique {
			s += " unique"
		}
		parts = append(parts, s)
	}
	return "columns " + strings.Join(parts, ", ")
}
