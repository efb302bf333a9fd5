// Package scripts holds the repository's shell scripts; this test runs
// setup-debian.sh against stub dpkg-query, apt-get and id commands, so what
// `make test` does on a fresh machine is checked without installing anything.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stubs writes dpkg-query (every package absent), apt-get (records its
// arguments) and id (prints uid) into a fresh directory.
func stubs(t *testing.T, uid string) (dir, aptLog string) {
	t.Helper()
	dir = t.TempDir()
	aptLog = filepath.Join(dir, "apt.log")
	files := map[string]string{
		"dpkg-query": "#!/bin/sh\nexit 1\n",
		"apt-get":    "#!/bin/sh\necho \"$*\" >>" + aptLog + "\n",
		"id":         "#!/bin/sh\necho " + uid + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, aptLog
}

func run(t *testing.T, stubDir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"setup-debian.sh"}, args...)...)
	cmd.Env = append(os.Environ(),
		"PATH="+stubDir+":"+os.Getenv("PATH"),
		"POLICY_RC_D="+filepath.Join(stubDir, "policy-rc.d"))
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestSetupIfNeeded(t *testing.T) {
	tests := []struct {
		name     string
		uid      string
		args     []string
		wantCode int
		wantApt  string // "" means apt-get must not run
		wantOut  string
	}{
		{"root installs only what it was asked for", "0",
			[]string{"--if-needed", "libh2-java"}, 1, "install -y -q libh2-java", "installing: libh2-java"},
		{"not root says the exact command and does not fail the build", "1000",
			[]string{"--if-needed", "postgresql", "libh2-java"}, 0, "",
			"to install them run: sudo scripts/setup-debian.sh postgresql libh2-java"},
		{"not root without --if-needed fails", "1000",
			[]string{"postgresql"}, 1, "", "sudo scripts/setup-debian.sh postgresql"},
		{"unknown package refused", "0", []string{"--if-needed", "oracle"}, 2, "", "unknown package oracle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, aptLog := stubs(t, tc.uid)
			out, code := run(t, dir, tc.args...)
			// As root the stub apt-get "succeeds" but dpkg-query still says
			// absent, so the script reports the failed install: exit 1.
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; output:\n%s", code, tc.wantCode, out)
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Fatalf("output lacks %q:\n%s", tc.wantOut, out)
			}
			apt, _ := os.ReadFile(aptLog)
			if tc.wantApt == "" && len(apt) > 0 {
				t.Fatalf("apt-get ran: %s", apt)
			}
			if tc.wantApt != "" && !strings.Contains(string(apt), tc.wantApt) {
				t.Fatalf("apt-get calls %q lack %q", apt, tc.wantApt)
			}
			if _, err := os.Stat(filepath.Join(dir, "policy-rc.d")); err == nil {
				t.Fatal("policy-rc.d left behind")
			}
		})
	}
}

// TestMakeRunsSetup checks the two README commands run the setup themselves.
func TestMakeRunsSetup(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	for _, tc := range []struct{ args, want string }{
		{"test", "scripts/setup-debian.sh --if-needed\n"},
		{"demo DIALECT=h2", "scripts/setup-debian.sh --if-needed default-jdk-headless libh2-java\n"},
		{"demo DIALECT=postgres", "scripts/setup-debian.sh --if-needed postgresql\n"},
	} {
		cmd := exec.Command("make", append([]string{"-n", "-C", ".."}, strings.Fields(tc.args)...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", tc.args, err, out)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("make -n %s does not run %q:\n%s", tc.args, tc.want, out)
		}
	}
}
