package schema_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
	"github.com/tidemarkdb/tidemark/plugins/builtin"
	"github.com/tidemarkdb/tidemark/plugins/postgres"
)

var versionedFormats = []string{"flyway", "liquibase", "golang-migrate", "goose"}

func resolve(t *testing.T, cfg schema.Config) *schema.Names {
	t.Helper()
	n, err := schema.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var (
	appV1 = schema.Config{Aggregates: []schema.Aggregate{{Namespace: "shop", Name: "Order", OwnTable: true}}}
	// The grown application: an aggregate whose tables sort before every
	// existing one (so a positional numbering would shift everything), a
	// query table and a saga table.
	appV2 = schema.Config{Aggregates: []schema.Aggregate{{Namespace: "shop", Name: "Order", OwnTable: true}, {Namespace: "bank", Name: "Account", OwnTable: true}},
		SagaTables: []string{"PAYMENT_SAGA"}}
	queriesV2 = []schema.QueryTable{{Projection: "payments", Fields: []schema.QueryField{{Column: "ref", Kind: dialect.KindText, Unique: true}}}}
)

func fileNames(fs []schema.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// versionOf reads the version number of a migration file name.
var versionOf = regexp.MustCompile(`^V?(\d+)`)

func version(t *testing.T, name string) int64 {
	m := versionOf.FindStringSubmatch(name)
	if m == nil {
		t.Fatalf("no version in %s", name)
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	return v
}

func TestVersionsStayStableWhenTheApplicationGrows(t *testing.T) {
	pg := postgres.Catalogue()
	for _, format := range versionedFormats {
		t.Run(format, func(t *testing.T) {
			first, err := schema.ExportVersioned(&pg, resolve(t, appV1), nil, "", format, nil)
			if err != nil {
				t.Fatal(err)
			}
			var maxV int64
			for _, f := range first {
				if f.Name != schema.LiquibaseChangelog {
					maxV = max(maxV, version(t, f.Name))
				}
			}
			added, err := schema.ExportVersioned(&pg, resolve(t, appV2), queriesV2, "", format, first)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]string{}
			for _, f := range first {
				byName[f.Name] = f.Content
			}
			var newUnits []string
			for _, f := range added {
				if f.Name == schema.LiquibaseChangelog {
					if !strings.HasPrefix(f.Content, byName[f.Name]) {
						t.Errorf("the changelog was not appended to")
					}
					continue
				}
				if _, clash := byName[f.Name]; clash {
					t.Errorf("%s would overwrite an existing file", f.Name)
				}
				if v := version(t, f.Name); v <= maxV {
					t.Errorf("%s: version %d is not above the existing %d", f.Name, v, maxV)
				}
				newUnits = append(newUnits, unitID(f.Content))
			}
			sort.Strings(newUnits)
			want := []string{"create-saga-table.sql@PAYMENT_SAGA", "event-store-schema.sql@ACCOUNT_EVENTS", "query-table-schema.sql@payments", "snapshot-schema.sql@ACCOUNT_SNAPSHOTS"}
			if fmt.Sprint(newUnits) != fmt.Sprint(want) {
				t.Errorf("added units %v, want %v", newUnits, want)
			}
			// The same configuration again adds nothing.
			all := append(append([]schema.File{}, first...), added...)
			again, err := schema.ExportVersioned(&pg, resolve(t, appV2), queriesV2, "", format, all)
			if err != nil || len(again) != 0 {
				t.Errorf("a repeated export added %v (%v)", fileNames(again), err)
			}
		})
	}
}

func unitID(content string) string {
	for _, l := range strings.Split(content, "\n") {
		if id, ok := strings.CutPrefix(l, schema.UnitHeaderPrefix); ok {
			return id
		}
	}
	return ""
}

func TestChangedContentIsRefusedNamingTheFile(t *testing.T) {
	pg := postgres.Catalogue()
	names := resolve(t, appV2)
	existing, err := schema.ExportVersioned(&pg, names, queriesV2, "", "goose", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The projection gains a column: its query table would change.
	grown := []schema.QueryTable{{Projection: "payments", Fields: append(queriesV2[0].Fields, schema.QueryField{Column: "amount", Kind: dialect.KindInteger})}}
	_, err = schema.ExportVersioned(&pg, names, grown, "", "goose", existing)
	var ce *schema.ExportConflictError
	if !errors.As(err, &ce) || !errors.Is(err, schema.ErrExportConflict) {
		t.Fatalf("want an *ExportConflictError, got %v", err)
	}
	if !strings.HasSuffix(ce.File, "_query_table_payments.sql") || ce.Unit != "query-table-schema.sql@payments" || !strings.Contains(err.Error(), ce.File) {
		t.Errorf("conflict names %s / %s: %v", ce.File, ce.Unit, err)
	}
	// A hand edit of an applied file is refused the same way.
	edited := append([]schema.File{}, existing...)
	edited[3].Content += "-- hand edit\n"
	if _, err := schema.ExportVersioned(&pg, names, queriesV2, "", "goose", edited); !errors.As(err, &ce) || ce.File != edited[3].Name {
		t.Errorf("edited %s: got %v", edited[3].Name, err)
	}
}

func TestVersionsGoAboveTheUsersOwnMigrations(t *testing.T) {
	pg := postgres.Catalogue()
	own := []schema.File{{Name: "20250101120000_add_reporting_view.sql", Content: "-- +goose Up\nCREATE VIEW v AS SELECT 1;\n"}, {Name: "README.md", Content: "notes"}}
	files, err := schema.ExportVersioned(&pg, resolve(t, appV1), nil, "", "goose", own)
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Name != "20250101120001_event_store_global_position.sql" {
		t.Errorf("first new file %s", files[0].Name)
	}
}

// Directories exported before files carried their unit are matched by the
// name's slug, so upgrading Tidemark adds no duplicate of an applied file.
func TestLegacyExportsAreRecognised(t *testing.T) {
	pg := postgres.Catalogue()
	for _, format := range versionedFormats {
		fresh, err := schema.ExportVersioned(&pg, resolve(t, appV1), nil, "", format, nil)
		if err != nil {
			t.Fatal(err)
		}
		var legacy []schema.File
		for _, f := range fresh {
			if f.Name == schema.LiquibaseChangelog {
				continue
			}
			_, body, _ := strings.Cut(f.Content, schema.UnitHeaderPrefix)
			_, body, _ = strings.Cut(body, "\n")
			legacy = append(legacy, schema.File{Name: f.Name, Content: "-- Tidemark schema for postgres (dialect postgres 0.9.0)\n" + body})
		}
		added, err := schema.ExportVersioned(&pg, resolve(t, appV2), nil, "", format, legacy)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var migrations int
		for _, f := range added {
			if f.Name != schema.LiquibaseChangelog {
				migrations++
			}
		}
		if migrations != 3 { // saga, ACCOUNT events and snapshots
			t.Errorf("%s: added %v", format, fileNames(added))
		}
	}
}

// Flyway's documented versioned-migration name: prefix V, version,
// separator "__", description, suffix .sql.
func TestFlywayFileNaming(t *testing.T) {
	pg := postgres.Catalogue()
	files, err := schema.ExportVersioned(&pg, resolve(t, appV2), queriesV2, "", "flyway", nil)
	if err != nil {
		t.Fatal(err)
	}
	flyway := regexp.MustCompile(`^V[1-9][0-9]*__[A-Za-z0-9_]+\.sql$`)
	seen := map[int64]bool{}
	for _, f := range files {
		if !flyway.MatchString(f.Name) {
			t.Errorf("%s is not a Flyway versioned migration name", f.Name)
		}
		v := version(t, f.Name)
		if seen[v] {
			t.Errorf("version %d used twice", v)
		}
		seen[v] = true
	}
}

// liquibaseSQLFile and liquibaseChangeSet are the attributes Liquibase's
// published changelog schema (dbchangelog-4.x.xsd: element sqlFile,
// attributeGroup changeSetAttributes) allows; the YAML changelog format
// mirrors the XML one.
var (
	liquibaseSQLFile   = map[string]bool{"path": true, "stripComments": true, "splitStatements": true, "encoding": true, "endDelimiter": true, "relativeToChangelogFile": true, "dbms": true}
	liquibaseChangeSet = map[string]bool{"id": true, "author": true, "changes": true, "context": true, "labels": true, "dbms": true, "runOnChange": true, "runAlways": true, "failOnError": true, "runInTransaction": true, "comment": true}
)

func checkChangelog(t *testing.T, content string, files map[string]string) []string {
	t.Helper()
	var doc map[string][]map[string]map[string]any
	if err := yaml.Unmarshal([]byte(content), &doc); err != nil {
		t.Fatalf("changelog is not the documented structure: %v\n%s", err, content)
	}
	if len(doc) != 1 || doc["databaseChangeLog"] == nil {
		t.Fatalf("the root must be databaseChangeLog alone: %v", doc)
	}
	var ids []string
	seen := map[string]bool{}
	for _, item := range doc["databaseChangeLog"] {
		cs, ok := item["changeSet"]
		if len(item) != 1 || !ok {
			t.Fatalf("item %v is not a changeSet", item)
		}
		for k := range cs {
			if !liquibaseChangeSet[k] {
				t.Errorf("changeSet attribute %s is not in the schema", k)
			}
		}
		id, _ := cs["id"].(string)
		if author, _ := cs["author"].(string); id == "" || author == "" {
			t.Errorf("changeSet without id or author: %v", cs)
		}
		if seen[id] {
			t.Errorf("changeSet id %s twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
		changes, _ := cs["changes"].([]any)
		if len(changes) != 1 {
			t.Fatalf("changeSet %s: changes %v", id, cs["changes"])
		}
		sf, _ := changes[0].(map[string]any)["sqlFile"].(map[string]any)
		for k := range sf {
			if !liquibaseSQLFile[k] {
				t.Errorf("sqlFile attribute %s is not in the schema", k)
			}
		}
		path, _ := sf["path"].(string)
		if _, ok := files[path]; !ok {
			t.Errorf("changeSet %s names %q, which was not exported", id, path)
		}
		if sf["relativeToChangelogFile"] != true || sf["splitStatements"] != true {
			t.Errorf("sqlFile %v", sf)
		}
	}
	return ids
}

func TestLiquibaseChangelogStructure(t *testing.T) {
	pg := postgres.Catalogue()
	first, err := schema.ExportVersioned(&pg, resolve(t, appV1), nil, "", "liquibase", nil)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range first {
		files[f.Name] = f.Content
	}
	ids := checkChangelog(t, files[schema.LiquibaseChangelog], files)
	added, err := schema.ExportVersioned(&pg, resolve(t, appV2), queriesV2, "", "liquibase", first)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range added {
		files[f.Name] = f.Content
	}
	grown := checkChangelog(t, files[schema.LiquibaseChangelog], files)
	if len(grown) != len(ids)+4 || fmt.Sprint(grown[:len(ids)]) != fmt.Sprint(ids) {
		t.Errorf("changeSets before %v, after %v", ids, grown)
	}
}

// procedural is a PostgreSQL catalogue whose first script holds a
// procedural body with ";" inside, declaring Oracle's "\n/" terminator.
func procedural() dialect.Catalogue {
	cat := postgres.Catalogue()
	cat.Identity.StatementTerminator = "\n/"
	scripts := append([]dialect.Script{}, cat.Scripts...)
	sc := scripts[0]
	sc.Statements = append([]string{"DO $$ BEGIN\n  PERFORM 1;\n  PERFORM 2;\nEND $$"}, sc.Statements...)
	scripts[0] = sc
	cat.Scripts = scripts
	return cat
}

func TestTerminatorKeepsProceduralBodiesWhole(t *testing.T) {
	cat := procedural()
	names := resolve(t, appV1)
	var want []string
	for _, st := range cat.Scripts[0].Statements {
		want = append(want, strings.ReplaceAll(st, "${event_store_global_position_table}", "EVENT_STORE_GLOBAL_POSITION"))
	}
	for _, format := range []string{"flyway", "liquibase"} {
		files, err := schema.ExportVersioned(&cat, names, nil, "", format, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Split as the tool does with the declared delimiter.
		_, body, _ := strings.Cut(files[0].Content, schema.UnitHeaderPrefix)
		_, body, _ = strings.Cut(body, "\n")
		var got []string
		for _, s := range strings.Split(body, cat.Identity.Terminator()) {
			if s = strings.TrimSpace(s); s != "" {
				got = append(got, s)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: split into %q, want %q", format, got, want)
		}
		if format == "liquibase" {
			log := files[len(files)-1].Content
			if !strings.Contains(log, `endDelimiter: "\n/"`) {
				t.Errorf("changelog does not declare the terminator:\n%s", log)
			}
		}
	}
}

// Every built-in dialect declares ";": none of its statements may contain
// one inside, or a tool splitting on it would cut the statement.
func TestBuiltinTerminatorsAreHonest(t *testing.T) {
	for _, name := range builtin.Names() {
		d, _ := builtin.Lookup(name)
		resp, err := d.Describe(context.Background(), dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cat := resp.Catalogue
		for _, sc := range cat.Scripts {
			for _, st := range sc.Statements {
				if body := strings.TrimRight(strings.TrimSpace(st), ";"); strings.Contains(body, cat.Identity.Terminator()) {
					t.Errorf("%s %s: a statement holds the terminator %q inside:\n%s", name, sc.Name, cat.Identity.Terminator(), st)
				}
			}
		}
	}
}
