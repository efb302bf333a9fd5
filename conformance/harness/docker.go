package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// dockerPingTimeout bounds the check whether a Docker daemon answers, so a
// machine without one learns it at once.
const dockerPingTimeout = 3 * time.Second

// dockerReadyTimeout bounds how long a container's server may take to accept
// connections (SQL Server is slow, and the image may need pulling).
const dockerReadyTimeout = 4 * time.Minute

// dockerImages names the image used per engine.
var dockerImages = map[string]struct{ repo, tag string }{
	EnginePostgres:  {"postgres", "15"},
	EngineMySQL:     {"mysql", "8.4"},
	EngineMariaDB:   {"mariadb", "11.4"},
	EngineSQLServer: {"mcr.microsoft.com/mssql/server", "2022-latest"},
}

// dockerEnv is a Docker daemon that answered a ping.
type dockerEnv struct{ pool *dockertest.Pool }

// dockerPool returns the Docker pool, probing the daemon once per Provider.
// The error is a *notInstalled when no daemon answers.
func (p *Provider) dockerPool() (*dockerEnv, error) {
	p.dockerOnce.Do(func() { p.docker, p.dockerErr = probeDocker() })
	return p.docker, p.dockerErr
}

func probeDocker() (*dockerEnv, error) {
	unavailable := func(why string) error {
		return &notInstalled{"Docker is not available (docker daemon not reachable: " + why + ")"}
	}
	if os.Getenv("DOCKER_HOST") == "" && os.Getenv("DOCKER_URL") == "" && os.Getenv("DOCKER_MACHINE_NAME") == "" {
		if _, err := os.Stat("/var/run/docker.sock"); err != nil {
			return nil, unavailable("no DOCKER_HOST and " + err.Error())
		}
	}
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, unavailable(err.Error())
	}
	pool.Client.SetTimeout(testtime.D(dockerPingTimeout))
	ctx, cancel := testtime.Context(context.Background(), dockerPingTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- pool.Client.PingWithContext(ctx) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = fmt.Errorf("no answer to ping within %v", testtime.Describe(dockerPingTimeout))
	}
	if err != nil {
		return nil, unavailable(err.Error())
	}
	pool.Client.SetTimeout(0) // pulls and starts may take long
	pool.MaxWait = testtime.D(dockerReadyTimeout)
	return &dockerEnv{pool: pool}, nil
}

// dockerServer starts a container for engine. It returns a *notInstalled
// error when Docker is not available.
func (p *Provider) dockerServer(ctx context.Context, engine string) (server, error) {
	img, ok := dockerImages[engine]
	if !ok {
		return nil, &notInstalled{"no Docker image for " + engine}
	}
	d, err := p.dockerPool()
	if err != nil {
		return nil, err
	}
	password := randomPassword()
	var env []string
	var port string
	switch engine {
	case EnginePostgres:
		env, port = []string{"POSTGRES_PASSWORD=" + password, "POSTGRES_HOST_AUTH_METHOD=scram-sha-256"}, "5432/tcp"
	case EngineMySQL:
		env, port = []string{"MYSQL_ROOT_PASSWORD=" + password}, "3306/tcp"
	case EngineMariaDB:
		env, port = []string{"MARIADB_ROOT_PASSWORD=" + password}, "3306/tcp"
	case EngineSQLServer:
		env, port = []string{"ACCEPT_EULA=Y", "MSSQL_SA_PASSWORD=" + password}, "1433/tcp"
	}
	res, err := d.pool.RunWithOptions(&dockertest.RunOptions{
		Repository: img.repo, Tag: img.tag, Env: env,
		Labels: map[string]string{"tidemark-harness": "1"},
	}, func(hc *dc.HostConfig) {
		hc.AutoRemove = true
		hc.RestartPolicy = dc.RestartPolicy{Name: "no"}
	})
	if err != nil {
		return nil, fmt.Errorf("dockertest %s:%s: %w", img.repo, img.tag, err)
	}
	// If the test process dies without Close, Docker removes it later.
	_ = res.Expire(uint(2 * time.Hour / time.Second))
	purge := func() { _ = d.pool.Purge(res) }
	hostPort := res.GetHostPort(port)
	source := fmt.Sprintf("dockertest %s:%s", img.repo, img.tag)

	var srv server
	var driverName, readyDSN string
	switch engine {
	case EnginePostgres:
		dsn := fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", password, hostPort)
		srv, driverName, readyDSN = &pgServer{adminDSN: dsn, source: source, adminServer: adminServer{cleanup: purge}}, "pgx", dsn
	case EngineMySQL, EngineMariaDB:
		cfg, err := mysql.ParseDSN(fmt.Sprintf("root:%s@tcp(%s)/?%s", password, hostPort, mysqlParams))
		if err != nil {
			purge()
			return nil, err
		}
		srv, driverName, readyDSN = &mysqlServer{engine: engine, base: cfg, source: source, adminServer: adminServer{cleanup: purge}}, "mysql", cfg.FormatDSN()
	case EngineSQLServer:
		dsn := fmt.Sprintf("sqlserver://sa:%s@%s?database=master", password, hostPort)
		srv, driverName, readyDSN = &mssqlServer{adminDSN: dsn, source: source, cleanup: purge, owned: true}, "sqlserver", dsn
	}

	rctx, cancel := testtime.Context(ctx, dockerReadyTimeout)
	defer cancel()
	var last error
	for {
		pctx, pcancel := testtime.Context(rctx, 5*time.Second)
		last = pingWith(pctx, driverName, readyDSN)
		pcancel()
		if last == nil {
			break
		}
		select {
		case <-rctx.Done():
			purge()
			return nil, fmt.Errorf("%s not ready after %v: %w", source, testtime.Describe(dockerReadyTimeout), errors.Join(rctx.Err(), last))
		case <-time.After(500 * time.Millisecond):
		}
	}
	var cerr error
	switch s := srv.(type) {
	case *pgServer:
		cerr = s.connect(ctx)
	case *mysqlServer:
		cerr = s.connect(ctx)
	case *mssqlServer:
		cerr = s.connect(ctx)
	}
	if cerr != nil {
		purge()
		return nil, fmt.Errorf("%s: %w", source, cerr)
	}
	return srv, nil
}

// randomPassword satisfies SQL Server's complexity rules (upper, lower,
// digit, symbol) and is safe in URLs and DSNs.
func randomPassword() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "Tm" + strings.ToLower(hex.EncodeToString(b[:])) + "_9"
}
