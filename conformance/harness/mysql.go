package harness

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// mysqlParams are the DSN parameters the harness uses for MariaDB and MySQL
// with github.com/go-sql-driver/mysql:
//
//   - parseTime=true&loc=UTC: DATE/DATETIME come back as time.Time in UTC
//     and time.Time arguments are sent as UTC;
//   - charset=utf8mb4&collation=utf8mb4_bin: the driver sends
//     "SET NAMES utf8mb4 COLLATE utf8mb4_bin" on every connection. Giving
//     only collation would put it in the handshake alone, which a server may
//     silently ignore; giving both makes the connection carry 4-byte UTF-8
//     on every server whatever its character_set_server (the local MariaDB
//     keeps its compiled-in latin1 default on purpose, so tests prove that
//     the DDL itself asks for utf8mb4). utf8mb4_bin makes literals compare
//     byte-wise, like the other engines;
//   - time_zone='+00:00': the session time zone, so TIMESTAMP columns and
//     NOW() agree with loc=UTC;
//   - multiStatements is left at its default (false): one statement per
//     Exec, as on every other engine.
const mysqlParams = "parseTime=true&loc=UTC&charset=utf8mb4&collation=utf8mb4_bin&time_zone=%27%2B00%3A00%27"

type mysqlFlavour int

const (
	flavourMariaDB mysqlFlavour = iota
	flavourMySQL
)

func (f mysqlFlavour) String() string {
	if f == flavourMySQL {
		return "MySQL"
	}
	return "MariaDB"
}

// mysqlBinaries finds the server and, for MariaDB, the install-db tool.
func mysqlBinaries(f mysqlFlavour) (server, installer string, err error) {
	isMaria := func(bin string) bool {
		out, _ := exec.Command(bin, "--no-defaults", "--version").CombinedOutput()
		return strings.Contains(string(out), "MariaDB")
	}
	switch f {
	case flavourMariaDB:
		server = lookPath("mariadbd")
		if server == "" {
			if m := lookPath("mysqld"); m != "" && isMaria(m) {
				server = m
			}
		}
		installer = lookPath("mariadb-install-db", "mysql_install_db")
		if server == "" || installer == "" {
			return "", "", &notInstalled{"MariaDB is not installed here (no mariadbd and mariadb-install-db)"}
		}
	case flavourMySQL:
		m := lookPath("mysqld")
		if m == "" {
			return "", "", &notInstalled{"MySQL 8 is not installed here (no mysqld)"}
		}
		if isMaria(m) {
			return "", "", &notInstalled{"MySQL 8 is not installed here (" + m + " is MariaDB)"}
		}
		server = m
	}
	return server, installer, nil
}

// mysqlServer is a MariaDB or MySQL server: one started by the harness
// (proc != nil) or one named by the environment.
type mysqlServer struct {
	engine string
	base   *mysql.Config // DSN without database
	source string
	adminServer
}

// startMySQL initialises and starts a throw-away MariaDB or MySQL server
// running as root (MariaDB and MySQL allow that with --user=root).
func startMySQL(ctx context.Context, f mysqlFlavour) (server, error) {
	bin, installer, err := mysqlBinaries(f)
	if err != nil {
		return nil, err
	}
	dir, err := tempDirIn(serverDataBase(), "tidemark-my-", nil)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "sock")
	var userArg []string
	if os.Geteuid() == 0 {
		userArg = []string{"--user=root"}
	}
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC", "HOME=" + dir}
	start := time.Now()
	if f == flavourMariaDB {
		args := append([]string{"--no-defaults"}, userArg...)
		args = append(args, "--datadir="+data, "--auth-root-authentication-method=normal", "--skip-test-db")
		err = runTool(ctx, nil, env, installer, args...)
	} else {
		args := append([]string{"--no-defaults"}, userArg...)
		args = append(args, "--datadir="+data, "--initialize-insecure")
		err = runTool(ctx, nil, env, bin, args...)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local %s: %w", f, err)
	}

	s := &mysqlServer{engine: EngineMariaDB, adminServer: adminServer{dir: dir}}
	if f == flavourMySQL {
		s.engine = EngineMySQL
	}
	err = startWithRetry(func(port int) error {
		args := append([]string{"--no-defaults"}, userArg...)
		args = append(args, "--datadir="+data, "--socket="+sock, "--pid-file="+filepath.Join(dir, "pid"),
			"--tmpdir="+dir, "--port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
			"--skip-name-resolve", "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin")
		if f == flavourMySQL {
			args = append(args, "--mysqlx=OFF")
		}
		p, err := startProc(strings.ToLower(f.String()), nil, env, filepath.Join(dir, "server.log"), syscall.SIGTERM, bin, args...)
		if err != nil {
			return err
		}
		// The socket answers as root@localhost whatever the TCP grants.
		sockDSN := "root@unix(" + sock + ")/"
		if err := p.waitReady(ctx, "mysql", sockDSN); err != nil {
			_ = p.stop()
			return err
		}
		s.proc = p
		if err := ensureTCPRoot(ctx, sockDSN, port); err != nil {
			_ = p.stop()
			return err
		}
		cfg, err := mysql.ParseDSN(fmt.Sprintf("root@tcp(127.0.0.1:%d)/?%s", port, mysqlParams))
		if err != nil {
			_ = p.stop()
			return err
		}
		s.base = cfg
		return nil
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local %s (%s) failed to start: %w", f, bin, err)
	}
	if err := s.connect(ctx); err != nil {
		s.close()
		return nil, err
	}
	s.source = fmt.Sprintf("local server %s %s (started by harness in %v)", f, s.version(ctx), time.Since(start).Round(10*time.Millisecond))
	return s, nil
}

// ensureTCPRoot makes root without password usable over 127.0.0.1. MariaDB's
// install-db creates root@127.0.0.1 itself; MySQL's --initialize-insecure
// makes only root@localhost, which --skip-name-resolve keeps off TCP.
func ensureTCPRoot(ctx context.Context, sockDSN string, port int) error {
	tcp := fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port)
	if err := pingWith(ctx, "mysql", tcp); err == nil {
		return nil
	}
	db, err := sql.Open("mysql", sockDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'",
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("make root@127.0.0.1: %s: %w", q, err)
		}
	}
	return pingWith(ctx, "mysql", tcp)
}

func (s *mysqlServer) connect(ctx context.Context) error {
	db, err := sql.Open("mysql", s.base.FormatDSN())
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

// version returns e.g. "10.11.19" for "10.11.19-MariaDB-0+deb12u1".
func (s *mysqlServer) version(ctx context.Context) string {
	var v string
	if err := s.admin.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "?"
	}
	return strings.SplitN(v, "-", 2)[0]
}

func (s *mysqlServer) create(ctx context.Context, driverName string) (*Database, error) {
	name := newDBName()
	// No CHARACTER SET clause: the database keeps the server's default.
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		return nil, fmt.Errorf("create database on %s: %w", s.source, err)
	}
	s.remember(name)
	cfg := s.base.Clone()
	cfg.DBName = name
	return &Database{Engine: s.engine, DriverName: driverName, DSN: cfg.FormatDSN(), Source: s.source}, nil
}

func (s *mysqlServer) close() error {
	return s.closeServer("DROP DATABASE IF EXISTS `%s`", os.RemoveAll)
}
