package jdbcbridge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// CreateFileDatabase creates a new H2 or HSQLDB file database (jdbcURL starts with
// jdbc:h2:file: or jdbc:hsqldb:file:) through the bridge's admin path: the bridge's internal
// admin user, with adminPassword, becomes its administrator, and user (upper-cased), with
// password, is created without admin rights and owns a schema of its name. Clients then
// connect as user: the server opens file databases only when they exist and refuses admin
// sessions on them, so this is the only way a file database comes to exist through the
// bridge. It fails when the database exists. opts supplies the Java launcher, the class path
// and the classes as for StartServer; its server settings are ignored.
func CreateFileDatabase(ctx context.Context, opts StartOptions, jdbcURL, user, password, adminPassword string) error {
	if adminPassword == "" {
		return fmt.Errorf("jdbcbridge: creating a file database needs an admin password")
	}
	java, javac, err := opts.javaBins()
	if err != nil {
		return err
	}
	cp := opts.ClassPath
	if len(cp) == 0 {
		cp = []string{H2Jar(), HSQLDBJar()}
	}
	classes := opts.ClassesDir
	if classes == "" {
		if classes, err = CompileClasses(ctx, javac); err != nil {
			return err
		}
	}
	args := append([]string{"-Duser.timezone=UTC"}, opts.JVMArgs...)
	args = append(args, "-cp", strings.Join(append([]string{classes}, cp...), string(os.PathListSeparator)),
		"tidemark.bridge.Server", "--create-database", jdbcURL, "--user", user)
	cmd := exec.CommandContext(ctx, java, args...)
	cmd.Dir = opts.WorkDir
	// Passwords go through the environment, never the command line (visible in ps).
	cmd.Env = append(os.Environ(), "TIDEMARK_JDBCBRIDGE_ADMIN_PASSWORD="+adminPassword, "TIDEMARK_JDBCBRIDGE_USER_PASSWORD="+password)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("jdbcbridge: create file database %s: %w: %s", jdbcURL, err, strings.TrimSpace(string(out)))
	}
	return nil
}
