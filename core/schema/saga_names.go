package schema

import (
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Saga declares a saga type's instance table (the Go form of @SagaTable).
// A saga not declared here, or declared without OwnTable and Table, keeps
// its instances in the shared ${saga_instances_table}.
type Saga struct {
	// Type is the saga type, saga.New's name (e.g. "bank.TransferSaga").
	Type string
	// OwnTable routes the saga to its own table: the saga area's prefix
	// before the SCREAMING_SNAKE_CASE of the saga's name, its type after
	// the last dot (bank.TransferSaga → <prefix>TRANSFER_SAGA), as the
	// spec derives an aggregate's table from its class name.
	OwnTable bool
	// Table names the table explicitly (no prefix, as an annotation's name)
	// and implies OwnTable.
	Table string
}

// SagaName is the part of a saga type the derived table name is built
// from: the text after its last dot.
func SagaName(sagaType string) string {
	return sagaType[strings.LastIndex(sagaType, ".")+1:]
}

// sagaTable is the instance table of s: the shared one, its explicit
// Table, or the saga prefix before the name derived from its type.
func sagaTable(s Saga, prefix, shared string) (string, error) {
	src := "saga " + s.Type
	switch {
	case s.Type == "":
		return "", &InvalidNameError{Name: s.Type, Source: "saga", Reason: "a saga declaration needs its saga type"}
	case s.Table != "":
		return s.Table, ValidateIdentifier(s.Table, src+" table")
	case !s.OwnTable:
		return shared, nil
	}
	base := ScreamingSnake(SagaName(s.Type))
	if base == "" {
		return "", &InvalidNameError{Name: s.Type, Source: src,
			Reason: "has no letter or digit after its last dot to derive its own table's name from; rename it or set its table"}
	}
	name := prefix + base
	return name, ValidateIdentifier(name, src+" own table")
}

// resolveSagas adds the declared sagas' tables to n (BySaga, and the
// distinct tables to sagas), refusing a name that is invalid, already
// another table of the schema, or a saga type declared twice with
// different tables.
func resolveSagas(cfg Config, n *Names, sagas, others map[string]bool) error {
	prefix, shared := cfg.Prefixes[dialect.AreaSaga], n.Shared["saga_instances_table"]
	taken := map[string]string{}
	for ph, name := range n.Shared {
		if ph != "saga_instances_table" {
			taken[strings.ToUpper(name)] = "${" + ph + "}"
		}
	}
	for t := range others {
		taken[strings.ToUpper(t)] = "an event or snapshot table"
	}
	for _, s := range cfg.Sagas {
		table, err := sagaTable(s, prefix, shared)
		if err != nil {
			return err
		}
		if role, ok := taken[strings.ToUpper(table)]; ok {
			return &InvalidNameError{Name: table, Source: "saga " + s.Type + " table", Reason: "is already " + role}
		}
		if prev, dup := n.BySaga[s.Type]; dup && prev != table {
			return fmt.Errorf("saga type %s declared twice with different tables (%s, %s)", s.Type, prev, table)
		}
		n.BySaga[s.Type] = table
		sagas[table] = true
	}
	return nil
}
