package stmt_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidemarkdb/tidemark/internal/stmtgen"
)

// TestGeneratedFilesAreFresh regenerates the package into a temporary
// directory and compares: a spec or types-table change without go generate
// fails here.
func TestGeneratedFilesAreFresh(t *testing.T) {
	dir := t.TempDir()
	if err := stmtgen.Write("../dialect", dir); err != nil {
		t.Fatal(err)
	}
	fresh, err := filepath.Glob(filepath.Join(dir, "*_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := filepath.Glob("*_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh) != len(onDisk) {
		t.Fatalf("%d generated files on disk, %d generated now: run go generate ./core/stmt", len(onDisk), len(fresh))
	}
	for _, f := range fresh {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Base(f))
		if err != nil {
			t.Fatalf("%v: run go generate ./core/stmt", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./core/stmt", filepath.Base(f))
		}
	}
}
