package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// ReplicaApplyDelay is the recovery_min_apply_delay of the second replica
// of PostgresReplicas: long enough (2 s) that a reader spreading its reads
// over both replicas sees two clearly different pasts at once.
const ReplicaApplyDelay = 2 * time.Second

// replicaCatchUp bounds the wait for a new database to reach every replica
// (the delayed one applies it ReplicaApplyDelay late): a hang guard only.
const replicaCatchUp = 60 * time.Second

// Replicas is a throw-away PostgreSQL primary with two streaming replicas
// (pg_basebackup, hot standby) on free loopback ports. Replica 1 applies
// WAL as it arrives; replica 2 with recovery_min_apply_delay =
// ReplicaApplyDelay.
type Replicas struct {
	primary  *pgServer
	replicas []*pgServer
	source   string
	dir      string
}

// Database is a fresh database on the primary and the same database on
// each replica (read-only there), all for driverName.
func (r *Replicas) Database(ctx context.Context, driverName string) (primary *Database, replicas []*Database, err error) {
	if driverName == "" {
		driverName = drivers[EnginePostgres][0]
	}
	if !contains(drivers[EnginePostgres], driverName) {
		return nil, nil, fmt.Errorf("harness: PostgreSQL replicas cannot be used with driver %q", driverName)
	}
	primary, err = r.primary.create(ctx, driverName)
	if err != nil {
		return nil, nil, err
	}
	primary.Source = r.source
	name := strings.TrimPrefix(mustPath(primary.DSN), "/")
	for i, rep := range r.replicas {
		dsn, err := withPgDatabase(rep.adminDSN, name)
		if err != nil {
			return nil, nil, err
		}
		// CREATE DATABASE reaches a standby through WAL: wait for it there.
		if err := waitForDatabase(ctx, dsn); err != nil {
			return nil, nil, fmt.Errorf("database %s on replica %d: %w\n%s", name, i+1, err, rep.proc.logTail())
		}
		replicas = append(replicas, &Database{Engine: EnginePostgres, DriverName: driverName, DSN: dsn,
			Source: fmt.Sprintf("%s, replica %d", r.source, i+1)})
	}
	return primary, replicas, nil
}

// Source says, for people, what was started.
func (r *Replicas) Source() string { return r.source }

func mustPath(dsn string) string {
	i := strings.Index(dsn, "://")
	rest := dsn[i+3:]
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		rest = rest[j:]
	}
	if j := strings.IndexByte(rest, '?'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func waitForDatabase(ctx context.Context, dsn string) error {
	deadline := testtime.Deadline(replicaCatchUp)
	for {
		err := pingWith(ctx, "pgx", dsn)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// PostgresReplicas starts (once per Provider) a PostgreSQL primary with two
// streaming replicas. It returns a *Skipped when PostgreSQL or
// pg_basebackup is not installed, an error when TIDEMARK_REQUIRE_ENGINES
// names postgres and it cannot start, and an error when an installed
// server fails to start.
func (p *Provider) PostgresReplicas(ctx context.Context) (*Replicas, error) {
	s, err := p.slot("postgres-replicas")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if !s.done {
		var r *Replicas
		r, s.err = startReplicas(ctx)
		if r != nil {
			s.srv = r
		}
		s.done = ctx.Err() == nil || s.srv != nil
	}
	srv, serr := s.srv, s.err
	s.mu.Unlock()
	if serr != nil {
		var ni *notInstalled
		if errors.As(serr, &ni) {
			serr = &Skipped{Reason: "no PostgreSQL replicas: " + ni.msg}
		}
		var sk *Skipped
		if errors.As(serr, &sk) && required(EnginePostgres) {
			return nil, fmt.Errorf("engine postgres is required by TIDEMARK_REQUIRE_ENGINES but its replicas are unavailable: %s", sk.Reason)
		}
		return nil, serr
	}
	return srv.(*Replicas), nil
}

// create and close make a *Replicas a server of a Provider slot.
func (r *Replicas) create(ctx context.Context, driverName string) (*Database, error) {
	db, _, err := r.Database(ctx, driverName)
	return db, err
}

func (r *Replicas) close() error {
	var errs []error
	for _, rep := range r.replicas {
		errs = append(errs, rep.close())
	}
	errs = append(errs, r.primary.close())
	errs = append(errs, os.RemoveAll(r.dir))
	return joinErrs(errs)
}

// pgCluster is what starting one server of the set needs.
type pgCluster struct {
	bin  string
	cred *syscall.Credential
	env  []string
	dir  string
}

func startReplicas(ctx context.Context) (*Replicas, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(bin, "pg_basebackup")); err != nil {
		return nil, &notInstalled{"pg_basebackup is not installed next to " + filepath.Join(bin, "postgres")}
	}
	cred, u, err := pgCredential()
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL replicas: %w", err)
	}
	dir, err := tempDirFor("tidemark-pgrep-", u)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL replicas: %w", err)
	}
	c := pgCluster{bin: bin, cred: cred, dir: dir, env: pgEnv(bin, dir, u)}
	start := time.Now()
	r := &Replicas{dir: dir}
	fail := func(err error) (*Replicas, error) {
		_ = r.closeStarted()
		return nil, fmt.Errorf("PostgreSQL replicas from %s failed to start: %w", bin, err)
	}
	data := filepath.Join(dir, "primary")
	if err := runTool(ctx, cred, c.env, filepath.Join(bin, "initdb"),
		"-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return fail(err)
	}
	// wal_level replica and wal senders are PostgreSQL's defaults; initdb's
	// pg_hba.conf trusts replication connections from 127.0.0.1.
	if r.primary, err = c.start(ctx, "primary", data, "-c", "wal_level=replica", "-c", "max_wal_senders=10"); err != nil {
		return fail(err)
	}
	port := pgPort(r.primary.adminDSN)
	for i, delay := range []time.Duration{0, ReplicaApplyDelay} {
		name := fmt.Sprintf("replica%d", i+1)
		rdata := filepath.Join(dir, name)
		// -R writes standby.signal and primary_conninfo; -X stream copies
		// the WAL written during the backup.
		if err := runTool(ctx, cred, c.env, filepath.Join(bin, "pg_basebackup"),
			"-h", "127.0.0.1", "-p", port, "-U", "postgres", "-D", rdata, "-R", "-X", "stream", "-c", "fast", "--no-sync"); err != nil {
			return fail(err)
		}
		args := []string{"-c", "hot_standby=on"}
		if delay > 0 {
			args = append(args, "-c", fmt.Sprintf("recovery_min_apply_delay=%dms", delay.Milliseconds()))
		}
		rep, err := c.start(ctx, name, rdata, args...)
		if err != nil {
			return fail(err)
		}
		r.replicas = append(r.replicas, rep)
	}
	r.source = fmt.Sprintf("local PostgreSQL %s primary with 2 streaming replicas, the second delayed %v (started by harness in %v)",
		r.primary.version(ctx), ReplicaApplyDelay, time.Since(start).Round(10*time.Millisecond))
	return r, nil
}

// closeStarted stops what a failed start had started.
func (r *Replicas) closeStarted() error {
	var errs []error
	for _, rep := range r.replicas {
		errs = append(errs, rep.close())
	}
	if r.primary != nil {
		errs = append(errs, r.primary.close())
	}
	errs = append(errs, os.RemoveAll(r.dir))
	return joinErrs(errs)
}

func pgEnv(bin, dir string, u *user.User) []string {
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "LC_ALL=C", "LANG=C", "TZ=UTC"}
	if u != nil {
		env = append(env, "HOME="+dir, "USER="+u.Username)
	}
	return env
}

func pgPort(dsn string) string {
	host := strings.TrimPrefix(dsn, "postgres://postgres@")
	host = host[:strings.IndexByte(host, '/')]
	return host[strings.LastIndexByte(host, ':')+1:]
}

// start runs one server of the set on data (its directory is removed with
// the set's, not by the server's close).
func (c pgCluster) start(ctx context.Context, name, data string, extra ...string) (*pgServer, error) {
	s := &pgServer{}
	err := startWithRetry(func(port int) error {
		args := append([]string{"-D", data,
			"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port), "-k", c.dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=100", "-c", "TimeZone=UTC"}, extra...)
		p, err := startProc("postgres "+name, c.cred, c.env, filepath.Join(c.dir, name+".log"), syscall.SIGINT,
			filepath.Join(c.bin, "postgres"), args...)
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
		return nil, err
	}
	if err := s.connect(ctx); err != nil {
		_ = s.proc.stop()
		return nil, err
	}
	s.source = "PostgreSQL " + name
	return s, nil
}

// Sync waits until every replica has replayed the WAL the primary had
// written when Sync was called (the delayed replica ReplicaApplyDelay
// later): what was committed before is then visible on each.
func (r *Replicas) Sync(ctx context.Context) error {
	var lsn string
	if err := r.primary.admin.QueryRowContext(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		return fmt.Errorf("primary WAL position: %w", err)
	}
	deadline := testtime.Deadline(replicaCatchUp)
	for i, rep := range r.replicas {
		for {
			var done bool
			err := rep.admin.QueryRowContext(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&done)
			if err != nil {
				return fmt.Errorf("replica %d replay position: %w", i+1, err)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("replica %d has not replayed %s within %v\n%s", i+1, lsn, testtime.Describe(replicaCatchUp), rep.proc.logTail())
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}
