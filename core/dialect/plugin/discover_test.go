package plugin_test

import (
	"context"
	"errors"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadNotFoundListsSearchedPlaces(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv(plugin.PluginPathEnv, c)
	_, err := plugin.Load(context.Background(), plugin.LoadOptions{Name: "nosuch", PluginDirs: []string{a, b}})
	var nf *plugin.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v (%T), want *NotFoundError", err, err)
	}
	t.Logf("err = %v", err)
	exe, _ := os.Executable()
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	msg := err.Error()
	for _, want := range []string{"tidemark-dialect-nosuch", a, b, c, filepath.Dir(exe), "plugin_dirs", plugin.PluginPathEnv, "executable directory", "built-in"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message does not name %q:\n%s", want, msg)
		}
	}
	if len(nf.Searched) != 5 {
		t.Errorf("Searched = %q, want 5 places", nf.Searched)
	}
	// The order is the search order.
	if ia, ib, ic := strings.Index(msg, a), strings.Index(msg, b), strings.Index(msg, c); !(ia < ib && ib < ic) {
		t.Errorf("places out of order: %s", msg)
	}
}

func TestLoadSkipsNonExecutable(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	p := filepath.Join(dir, plugin.PluginFileName("x"))
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := plugin.Load(context.Background(), plugin.LoadOptions{Name: "x", PluginDirs: []string{dir}})
	var nf *plugin.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "not executable") {
		t.Fatalf("err = %v, want not found mentioning the non-executable file", err)
	}
}

func TestLoadRejectsBadNames(t *testing.T) {
	isolate(t)
	for _, name := range []string{"../etc", "a/b", "Postgres", ""} {
		_, err := plugin.Load(context.Background(), plugin.LoadOptions{Name: name})
		var nf *plugin.NotFoundError
		if err == nil || errors.As(err, &nf) {
			t.Errorf("name %q: err = %v, want an invalid-name error", name, err)
		}
	}
}

func TestLoadExplicitPathMissing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope")
	_, err := plugin.Load(context.Background(), plugin.LoadOptions{Path: p, Name: "fixture"})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v, want it to name %s", err, p)
	}
}
