package schema_test

import (
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
)

func TestExportOrderAndFormats(t *testing.T) {
	names, err := schema.Resolve(schema.Config{Aggregates: []schema.Aggregate{{Namespace: "bank", Name: "BankAccount", OwnTable: true}}})
	if err != nil {
		t.Fatal(err)
	}
	pg := postgres.Catalogue()
	for _, format := range schema.Formats {
		files, err := schema.Export(&pg, names, nil, "", format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		all := ""
		for _, f := range files {
			all += "\n-- FILE " + f.Name + "\n" + f.Content
		}
		posName := "EVENT_STORE_GLOBAL_POSITION"
		if format == "template" {
			posName = "${event_store_global_position_table}"
		}
		pos := strings.Index(all, posName)
		tbl := strings.Index(all, "CREATE TABLE IF NOT EXISTS")
		if pos < 0 || tbl < 0 || pos > tbl {
			t.Errorf("%s: the position object must come before the tables (%d, %d)", format, pos, tbl)
		}
		if format == "template" {
			if !strings.Contains(all, "${event_store_table}") {
				t.Errorf("template lost its placeholders")
			}
			continue
		}
		if strings.Contains(all, "${") {
			t.Errorf("%s: unfilled placeholder left", format)
		}
		if !strings.Contains(all, "BANK_ACCOUNT_EVENTS") {
			t.Errorf("%s: per-aggregate table missing", format)
		}
	}
	files, _ := schema.Export(&pg, names, nil, "", "flyway")
	if !strings.HasPrefix(files[0].Name, "V1__event_store_global_position") {
		t.Errorf("flyway first file %s", files[0].Name)
	}
	lq, _ := schema.Export(&pg, names, nil, "", "liquibase")
	if lq[len(lq)-1].Name != "db.changelog-master.yaml" || !strings.Contains(lq[len(lq)-1].Content, "sqlFile") {
		t.Errorf("liquibase changelog missing")
	}
	if _, err := schema.Export(&pg, names, nil, "", "nope"); err == nil {
		t.Errorf("unknown format accepted")
	}
}
