package main

import (
	"errors"
	"strings"
	"testing"
)

// An engine the CLI has no driver for (a third party's Derby dialect) is
// refused before any server starts, naming the driver and pointing to
// conformance.Run in a Go test; so is an engine it cannot start or reach.
func TestConformanceOnAnEngineWithoutDriver(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		reason string
	}{
		{"driver not linked", []string{"--dialect", "h2", "--driver", "derbysql", "--engine", "derby", "--dsn", "derby://app@127.0.0.1/tidemark"}, `no database/sql driver "derbysql"`},
		{"engine unknown", []string{"--dialect", "h2", "--engine", "derby"}, "no way to start or reach a derby server"},
	}
	for _, c := range cases {
		_, err := run(t, conformanceCmd(), c.args...)
		var nd *NoDriverError
		if !errors.As(err, &nd) {
			t.Fatalf("%s: want a *NoDriverError, got %v", c.name, err)
		}
		for _, want := range []string{c.reason, "conformance.Run(t, conformance.Target{", "docs/writing-a-dialect.md", "derby"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q:\n%v", c.name, want, err)
			}
		}
	}
}
