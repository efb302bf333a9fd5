package harness

import (
	"os"
	"testing"
)

func TestServerDataBase(t *testing.T) {
	t.Setenv("TIDEMARK_SERVER_DATA_DIR", "")
	got := serverDataBase()
	if got != memDirBase && got != os.TempDir() {
		t.Fatalf("serverDataBase() = %q, want %q or the temporary directory %q", got, memDirBase, os.TempDir())
	}
	t.Logf("servers keep their data under %s", got)
	d := t.TempDir()
	t.Setenv("TIDEMARK_SERVER_DATA_DIR", d)
	if got := serverDataBase(); got != d {
		t.Fatalf("with TIDEMARK_SERVER_DATA_DIR=%s: serverDataBase() = %q", d, got)
	}
}
