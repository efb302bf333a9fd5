package harness

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// newEnvServer wraps a server named by an environment variable. It checks
// that the server answers; a DSN that is set but does not work is an error,
// not a skip.
func newEnvServer(ctx context.Context, engine, envName, dsn string) (server, error) {
	source := "env " + envName
	pctx, cancel := testtime.Context(ctx, 15*time.Second)
	defer cancel()
	switch engine {
	case EnginePostgres:
		s := &pgServer{adminDSN: dsn, source: source}
		if err := s.connect(pctx); err != nil {
			return nil, fmt.Errorf("%s does not answer: %w", envName, err)
		}
		return &envServer{inner: s, engine: engine, source: source, dsn: dsn}, nil
	case EngineMariaDB, EngineMySQL:
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envName, err)
		}
		base := cfg.Clone()
		base.DBName = ""
		s := &mysqlServer{engine: engine, base: base, source: source}
		if err := s.connect(pctx); err != nil {
			return nil, fmt.Errorf("%s does not answer: %w", envName, err)
		}
		return &envServer{inner: s, engine: engine, source: source, dsn: dsn}, nil
	case EngineSQLServer:
		s := &mssqlServer{adminDSN: dsn, source: source}
		if err := s.connect(pctx); err != nil {
			return nil, fmt.Errorf("%s does not answer: %w", envName, err)
		}
		return &envServer{inner: s, engine: engine, source: source, dsn: dsn}, nil
	}
	return nil, fmt.Errorf("harness: no environment DSN support for %s", engine)
}

// envServer creates fresh databases on a server from the environment when
// it may, and otherwise hands out the DSN as it is, with a Note.
//
// The DSN's own parameters are kept as given (the harness adds none), so a
// MySQL DSN should carry parseTime=true&loc=UTC&charset=utf8mb4 like the
// local ones do (see mysqlParams).
type envServer struct {
	inner  server
	engine string
	source string
	dsn    string
}

func (e *envServer) create(ctx context.Context, driverName string) (*Database, error) {
	db, err := e.inner.create(ctx, driverName)
	if err == nil {
		return db, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	// No right to create databases: use the DSN as it is.
	return &Database{Engine: e.engine, DriverName: driverName, DSN: e.dsn, Source: e.source,
		Note: "used as is, not a fresh database: cannot create one on this server (" + err.Error() + "); tests share its tables"}, nil
}

func (e *envServer) close() error { return e.inner.close() }

var pgDBNameKV = regexp.MustCompile(`(^|\s)dbname\s*=\s*('[^']*'|\S*)`)

// withPgDatabase returns dsn (URL or key=value form) naming database name.
func withPgDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	if pgDBNameKV.MatchString(dsn) {
		return pgDBNameKV.ReplaceAllString(dsn, "${1}dbname="+name), nil
	}
	return strings.TrimSpace(dsn + " dbname=" + name), nil
}

// withMSSQLDatabase returns dsn (sqlserver:// URL or ADO key=value form)
// naming database name.
func withMSSQLDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "sqlserver://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		q := u.Query()
		q.Del("database")
		q.Set("database", name)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	if strings.Contains(dsn, "odbc:") {
		return "", errors.New("odbc-style sqlserver DSN not supported for fresh databases")
	}
	var parts []string
	for _, p := range strings.Split(dsn, ";") {
		k := strings.ToLower(strings.TrimSpace(strings.SplitN(p, "=", 2)[0]))
		if k == "database" || k == "initial catalog" || p == "" {
			continue
		}
		parts = append(parts, p)
	}
	parts = append(parts, "database="+name)
	return strings.Join(parts, ";"), nil
}

func joinErrs(errs []error) error { return errors.Join(errs...) }
