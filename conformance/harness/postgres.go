package harness

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pgUser is the unprivileged OS user that runs PostgreSQL when the harness
// runs as root (PostgreSQL refuses to run as root).
const pgUser = "tidemark-test"

// pgBinDir finds the newest PostgreSQL installation's bin directory.
func pgBinDir() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool {
		return pgMajor(matches[i]) > pgMajor(matches[j])
	})
	for _, m := range matches {
		dir := filepath.Dir(m)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	if pc := lookPath("pg_config"); pc != "" {
		out, err := exec.Command(pc, "--bindir").Output()
		if err == nil {
			dir := strings.TrimSpace(string(out))
			if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
				return dir, nil
			}
		}
	}
	if p := lookPath("initdb"); p != "" {
		return filepath.Dir(p), nil
	}
	return "", &notInstalled{"PostgreSQL is not installed here (no /usr/lib/postgresql/*/bin/initdb, no pg_config, no initdb on PATH)"}
}

func pgMajor(initdbPath string) int {
	v := filepath.Base(filepath.Dir(filepath.Dir(initdbPath)))
	n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return n
}

// pgCredential returns the credential to run PostgreSQL with: the
// unprivileged pgUser (created if missing) when running as root, else nil
// (run as the current user).
func pgCredential() (*syscall.Credential, *user.User, error) {
	if os.Geteuid() != 0 {
		return nil, nil, nil
	}
	// Test processes of several packages may race to create the user, and
	// useradd fails while another holds the passwd lock: retry a little.
	var u *user.User
	var lastErr error
	for attempt := 0; attempt < 10; attempt++ {
		var err error
		if u, err = user.Lookup(pgUser); err == nil {
			break
		}
		useradd := lookPath("useradd")
		if useradd == "" {
			return nil, nil, fmt.Errorf("PostgreSQL cannot run as root and user %s does not exist (no useradd to create it)", pgUser)
		}
		out, aerr := exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", pgUser).CombinedOutput()
		if aerr == nil {
			continue
		}
		lastErr = fmt.Errorf("useradd %s: %v: %s", pgUser, aerr, strings.TrimSpace(string(out)))
		time.Sleep(200 * time.Millisecond)
	}
	if u == nil {
		return nil, nil, lastErr
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, u, nil
}

// tempDirFor makes a temporary directory owned by u (or the current user
// when u is nil) and makes sure u can reach it.
func tempDirFor(pattern string, u *user.User) (string, error) {
	return tempDirIn(os.TempDir(), pattern, u)
}

// tempDirIn is tempDirFor in base (or /tmp when u cannot reach base).
func tempDirIn(base, pattern string, u *user.User) (string, error) {
	if u != nil && !traversable(base) {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, pattern)
	if err != nil {
		return "", err
	}
	if u != nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	markOwner(dir)
	return dir, nil
}

// traversable reports whether every directory from / down to dir can be
// searched by other users.
func traversable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		st, err := os.Stat(dir)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

// pgServer is a PostgreSQL server: one started by the harness (proc != nil)
// or one named by the environment.
type pgServer struct {
	adminDSN string // URL form, database "postgres"
	source   string
	adminServer
}

// startPostgres initialises and starts a throw-away cluster.
func startPostgres(ctx context.Context) (server, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, u, err := pgCredential()
	if err != nil {
		return nil, fmt.Errorf("local PostgreSQL: %w", err)
	}
	dir, err := tempDirFor("tidemark-pg-", u)
	if err != nil {
		return nil, fmt.Errorf("local PostgreSQL: %w", err)
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "LC_ALL=C", "LANG=C", "TZ=UTC"}
	if u != nil {
		env = append(env, "HOME="+dir, "USER="+u.Username)
	}
	data := filepath.Join(dir, "data")
	start := time.Now()
	if err := runTool(ctx, cred, env, filepath.Join(bin, "initdb"),
		"-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local PostgreSQL: %w", err)
	}
	s := &pgServer{adminServer: adminServer{dir: dir}}
	err = startWithRetry(func(port int) error {
		p, err := startProc("postgres", cred, env, filepath.Join(dir, "server.log"), syscall.SIGINT,
			filepath.Join(bin, "postgres"), "-D", data,
			"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port), "-k", dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=200", "-c", "TimeZone=UTC",
			// Prepared transactions hold the high-water mark like open
			// ones; plugins/postgres tests this (default 0: disabled).
			"-c", "max_prepared_transactions=10")
		if err != nil {
			return err
		}
		dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
		if err := p.waitReady(ctx, "pgx", dsn); err != nil {
			_ = p.stop()
			return err
		}
		s.proc, s.adminDSN = p, dsn
		return nil
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local PostgreSQL from %s failed to start: %w", bin, err)
	}
	if err := s.connect(ctx); err != nil {
		s.close()
		return nil, err
	}
	s.source = fmt.Sprintf("local server PostgreSQL %s (started by harness in %v)", s.version(ctx), time.Since(start).Round(10*time.Millisecond))
	return s, nil
}

func (s *pgServer) connect(ctx context.Context) error {
	db, err := sql.Open("pgx", s.adminDSN)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(2)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return err
	}
	s.admin = db
	return nil
}

func (s *pgServer) version(ctx context.Context) string {
	var v string
	if err := s.admin.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "?"
	}
	return strings.Fields(v)[0]
}

func (s *pgServer) create(ctx context.Context, driverName string) (*Database, error) {
	name := newDBName()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8'"); err != nil {
		return nil, fmt.Errorf("create database on %s: %w", s.source, err)
	}
	s.remember(name)
	dsn, err := withPgDatabase(s.adminDSN, name)
	if err != nil {
		return nil, err
	}
	return &Database{Engine: EnginePostgres, DriverName: driverName, DSN: dsn, Source: s.source}, nil
}

func (s *pgServer) close() error {
	return s.closeServer("DROP DATABASE IF EXISTS %s WITH (FORCE)", removeLater)
}
