package jdbcbridge

import (
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestDockerfileBuildsTheTestedSources: there is no Docker here, so check statically that the
// image compiles exactly the sources the driver embeds and the tests run (every .java file
// of java/tidemark/bridge), starts the same main class, and, binding 0.0.0.0, passes TLS.
func TestDockerfileBuildsTheTestedSources(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		"COPY java/ java/",
		"javac -encoding UTF-8 -d classes java/tidemark/bridge/*.java",
		`"tidemark.bridge.Server"`,
		`"--bind", "0.0.0.0"`,
		`"--tls-cert", "/certs/cert.pem", "--tls-key", "/certs/key.pem"`,
		"USER bridge",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	sh, err := os.ReadFile("build.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sh), `"$here"/java/tidemark/bridge/*.java`) {
		t.Error("build.sh does not compile java/tidemark/bridge/*.java")
	}
	// The embedded sources are exactly that directory's .java files, none elsewhere.
	embedded, err := fs.Glob(javaSources, "java/tidemark/bridge/*.java")
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := fs.Glob(os.DirFS("."), "java/tidemark/bridge/*.java")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(embedded, ",") != strings.Join(onDisk, ",") || len(onDisk) == 0 {
		t.Errorf("embedded %v, on disk %v", embedded, onDisk)
	}
	var other []string
	_ = fs.WalkDir(os.DirFS("java"), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".java") && !strings.HasPrefix(p, "tidemark/bridge/") {
			other = append(other, p)
		}
		return nil
	})
	if len(other) > 0 {
		t.Errorf("Java sources outside java/tidemark/bridge are not built by the Dockerfile: %v", other)
	}
}
