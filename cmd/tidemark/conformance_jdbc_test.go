package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/conformance/harness"
	"github.com/tidemarkdb/tidemark/jdbcbridge"
)

// Every bad --jdbc-* combination is refused with a *JDBCFlagError before the
// plugin is loaded or Java started: the plugin named here does not exist, so
// reaching the loader would fail differently.
func TestConformanceJDBCFlagsRefusedFirst(t *testing.T) {
	jar := filepath.Join(t.TempDir(), "driver.jar")
	if err := os.WriteFile(jar, []byte("not read"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--plugin", filepath.Join(t.TempDir(), "no-such-plugin")}
	cases := []struct {
		name, flag string
		args       []string
	}{
		{"url without jar", "jdbc-jar", []string{"--jdbc-url", "jdbc:x:{db}"}},
		{"jar without url", "jdbc-url", []string{"--jdbc-jar", jar}},
		{"not a JDBC URL", "jdbc-url", []string{"--jdbc-jar", jar, "--jdbc-url", "derby:memory:{db}"}},
		{"no placeholder", "jdbc-url", []string{"--jdbc-jar", jar, "--jdbc-url", "jdbc:derby:memory:one"}},
		{"two placeholders", "jdbc-url", []string{"--jdbc-jar", jar, "--jdbc-url", "jdbc:x:{db}/{db}"}},
		{"missing jar", "jdbc-jar", []string{"--jdbc-jar", jar + ".gone", "--jdbc-url", "jdbc:x:{db}"}},
		{"another driver", "driver", []string{"--jdbc-jar", jar, "--jdbc-url", "jdbc:x:{db}", "--driver", "pgx"}},
		{"a DSN too", "dsn", []string{"--jdbc-jar", jar, "--jdbc-url", "jdbc:x:{db}", "--dsn", "x"}},
		{"an engine too", "engine", []string{"--jdbc-jar", jar, "--jdbc-url", "jdbc:x:{db}", "--engine", "h2"}},
	}
	for _, c := range cases {
		_, err := run(t, conformanceCmd(), append(append([]string{}, base...), c.args...)...)
		var fe *JDBCFlagError
		if !errors.As(err, &fe) {
			t.Errorf("%s: want a *JDBCFlagError, got %v", c.name, err)
			continue
		}
		if fe.Flag != c.flag {
			t.Errorf("%s: the error names --%s, want --%s: %v", c.name, fe.Flag, c.flag, err)
		}
	}
}

// The suite runs a plugin through a bridge the CLI starts for a driver jar
// and a URL with {db}: here the H2 plugin on the H2 jar, as a third party's
// plugin for another JDBC engine would run.
func TestConformanceThroughJDBCFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a JVM")
	}
	skip := t.Skipf
	if harness.Required(harness.EngineH2) {
		skip = t.Fatalf // CI installs Java and the H2 jar: their absence is a failure there
	}
	if _, _, err := jdbcbridge.FindJava(); err != nil {
		skip("no Java: %v", err)
	}
	jar := jdbcbridge.H2Jar()
	if _, err := os.Stat(jar); err != nil {
		skip("no H2 jar (install libh2-java): %v", err)
	}
	out, err := run(t, conformanceCmd(), "--dialect", "h2", "--jdbc-jar", jar,
		"--jdbc-url", "jdbc:h2:mem:{db};DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=60000", "--jdbc-user", "sa",
		"--only", "eventstore/payload_round_trip,eventstore/expected_versions,catalogue/")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"on the JDBC bridge (started by tidemark", " 0 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " 0 passed") {
		t.Errorf("nothing passed:\n%s", out)
	}
}
