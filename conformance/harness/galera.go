package harness

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// EngineGalera names a MariaDB Galera cluster in TIDEMARK_REQUIRE_ENGINES:
// with it listed, StartGalera fails instead of returning a *Skipped.
const EngineGalera = "galera"

// galeraReadyTimeout bounds a node's start, state transfer included (an
// rsync SST of a fresh data directory takes a few seconds on loopback).
const galeraReadyTimeout = 90 * time.Second

// GaleraCluster is a throw-away MariaDB Galera cluster on loopback, one
// mariadbd per node, replicating with the galera-4 provider and joining by
// rsync state transfers (Debian packages galera-4, rsync, mariadb-server).
type GaleraCluster struct {
	Nodes []*GaleraNode
	// Source says, for people, what runs (server version, node count).
	Source string
	dir    string
}

// GaleraNode is one node of a GaleraCluster.
type GaleraNode struct {
	Name string
	Port int // the SQL port on 127.0.0.1
	base *mysql.Config
	proc *proc
}

// DSN is the go-sql-driver/mysql DSN of database on the node, with the
// harness's usual parameters (see mysqlParams) and extra ones appended
// (e.g. "wsrep_sync_wait=1").
func (n *GaleraNode) DSN(database string, extra ...string) string {
	cfg := n.base.Clone()
	cfg.DBName = database
	dsn := cfg.FormatDSN()
	for _, x := range extra {
		dsn += "&" + x
	}
	return dsn
}

// Kill stops the node with SIGKILL, as a crash would.
func (n *GaleraNode) Kill() error { return n.proc.kill() }

// Alive reports whether the node's server process still runs.
func (n *GaleraNode) Alive() bool {
	select {
	case <-n.proc.exited:
		return false
	default:
		return true
	}
}

// galeraProvider finds the wsrep provider library the galera-4 package
// installed (its file list first, then the paths Debian uses).
func galeraProvider() string {
	out, _ := exec.Command("dpkg-query", "-L", "galera-4").Output()
	var candidates []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(l, "/libgalera_smm.so") {
			candidates = append(candidates, l)
		}
	}
	candidates = append(candidates, "/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so",
		"/usr/lib64/galera-4/libgalera_smm.so", "/usr/lib64/galera/libgalera_smm.so")
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	return ""
}

// galeraSkip is the harness's answer when a cluster cannot run here: a
// *Skipped with the reason, or a plain error when TIDEMARK_REQUIRE_ENGINES
// names galera.
func galeraSkip(reason string) error {
	if required(EngineGalera) {
		return fmt.Errorf("galera is required (TIDEMARK_REQUIRE_ENGINES) but %s", reason)
	}
	return &Skipped{Reason: reason}
}

// StartGalera initialises and starts an n-node cluster: node 1 bootstraps
// it from a fresh data directory, the others join in turn and receive its
// state by rsync. It returns a *Skipped when galera-4, rsync or MariaDB is
// missing, and when the cluster does not form (the reason carries the
// node's log tail).
func StartGalera(ctx context.Context, n int) (*GaleraCluster, error) {
	bin, installer, err := mysqlBinaries(flavourMariaDB)
	if err != nil {
		return nil, galeraSkip(err.Error())
	}
	provider := galeraProvider()
	if provider == "" {
		return nil, galeraSkip("the galera-4 package is not installed (no libgalera_smm.so); scripts/setup-debian.sh installs it")
	}
	for _, tool := range []string{"rsync", "wsrep_sst_rsync"} {
		if lookPath(tool) == "" {
			return nil, galeraSkip(tool + " is not installed (packages rsync and mariadb-server); scripts/setup-debian.sh installs them")
		}
	}
	sweepStale()
	dir, err := os.MkdirTemp("", "tidemark-galera-")
	if err != nil {
		return nil, err
	}
	markOwner(dir)
	c := &GaleraCluster{dir: dir}
	start := time.Now()
	ports, err := galeraPorts(n)
	if err != nil {
		c.Close()
		return nil, err
	}
	var peers []string
	for i := range n {
		peers = append(peers, "127.0.0.1:"+strconv.Itoa(ports[i][1]))
	}
	if err := c.start(ctx, n, bin, installer, provider, ports, peers); err != nil {
		c.Close()
		return nil, galeraSkip("the Galera cluster did not form: " + err.Error())
	}
	version := "?"
	if db, err := sql.Open("mysql", c.Nodes[0].DSN("")); err == nil {
		_ = db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version)
		db.Close()
	}
	c.Source = fmt.Sprintf("local MariaDB Galera cluster, %d nodes on loopback, %s (started by harness in %v)",
		n, strings.SplitN(version, "-", 2)[0], time.Since(start).Round(10*time.Millisecond))
	return c, nil
}

// galeraPorts picks, per node, four free loopback ports: SQL, group
// communication, incremental state transfer, rsync state transfer.
func galeraPorts(n int) ([][4]int, error) {
	seen := map[int]bool{}
	out := make([][4]int, n)
	for i := range n {
		for j := range 4 {
			for {
				p, err := freePort()
				if err != nil {
					return nil, err
				}
				if !seen[p] {
					seen[p] = true
					out[i][j] = p
					break
				}
			}
		}
	}
	return out, nil
}

// start forms the cluster. A state transfer by rsync took 20-35 s per
// joiner on a loaded 2-core machine, so the joiners are spared it: node 1
// is initialised, bootstrapped once and shut down cleanly (its
// grastate.dat then records the cluster's id and last seqno), its data
// directory is copied to every other node, and the cluster is bootstrapped
// again from node 1 with the others joining at once: they hold the same
// state, so they join without a transfer (rsync stays the method when one
// is needed, e.g. a node started again later).
func (c *GaleraCluster) start(ctx context.Context, n int, bin, installer, provider string, ports [][4]int, peers []string) error {
	for i := range n {
		if err := os.MkdirAll(filepath.Join(c.dir, fmt.Sprintf("node%d", i+1)), 0o755); err != nil {
			return err
		}
	}
	cred, err := galeraCredential(c.dir)
	if err != nil {
		return err
	}
	env := func(ndir string) []string {
		return []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC", "HOME=" + ndir}
	}
	first := filepath.Join(c.dir, "node1")
	if err := runTool(ctx, cred, env(first), installer, "--no-defaults", "--datadir="+filepath.Join(first, "data"),
		"--auth-root-authentication-method=normal", "--skip-test-db"); err != nil {
		return err
	}
	node, err := c.launch(ctx, 0, bin, provider, cred, env(first), ports[0], peers)
	if err != nil {
		return fmt.Errorf("node 1: %w", err)
	}
	if err := node.proc.stop(); err != nil {
		return fmt.Errorf("node 1 did not shut down cleanly: %w", err)
	}
	for i := 1; i < n; i++ {
		dst := filepath.Join(c.dir, fmt.Sprintf("node%d", i+1), "data")
		if err := runTool(ctx, nil, env(c.dir), "cp", "-a", filepath.Join(first, "data"), dst); err != nil {
			return err
		}
		_ = os.Remove(filepath.Join(dst, "gvwstate.dat"))
	}
	if node, err = c.launch(ctx, 0, bin, provider, cred, env(first), ports[0], peers); err != nil {
		return fmt.Errorf("node 1 (again): %w", err)
	}
	c.Nodes = []*GaleraNode{node}
	joined := make([]*GaleraNode, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ndir := filepath.Join(c.dir, fmt.Sprintf("node%d", i+1))
			joined[i], errs[i] = c.launch(ctx, i, bin, provider, cred, env(ndir), ports[i], peers)
		}()
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if joined[i] != nil {
			c.Nodes = append(c.Nodes, joined[i])
		}
		if errs[i] != nil {
			return fmt.Errorf("node %d: %w", i+1, errs[i])
		}
	}
	return nil
}

// launch starts node i on its data directory and waits until it is synced
// with the cluster; node 1 bootstraps the cluster.
func (c *GaleraCluster) launch(ctx context.Context, i int, bin, provider string, cred *syscall.Credential, env []string, ports [4]int, peers []string) (*GaleraNode, error) {
	name := fmt.Sprintf("node%d", i+1)
	ndir := filepath.Join(c.dir, name)
	sock := filepath.Join(ndir, "sock")
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(ndir, "data"), "--socket=" + sock,
		"--pid-file=" + filepath.Join(ndir, "pid"), "--tmpdir=" + ndir, "--port=" + strconv.Itoa(ports[0]),
		"--bind-address=127.0.0.1", "--skip-name-resolve", "--innodb-flush-log-at-trx-commit=0",
		"--innodb-buffer-pool-size=64M", "--performance-schema=OFF",
		// What Galera requires of its nodes.
		"--binlog-format=ROW", "--default-storage-engine=InnoDB", "--innodb-autoinc-lock-mode=2",
		"--wsrep-on=ON", "--wsrep-provider=" + provider, "--wsrep-cluster-name=tidemark",
		"--wsrep-cluster-address=gcomm://" + strings.Join(peers, ","), "--wsrep-node-name=" + name,
		"--wsrep-node-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--wsrep-sst-method=rsync", "--wsrep-sst-receive-address=127.0.0.1:" + strconv.Itoa(ports[3]),
		// gcache 32M: the default 128M file per node is written in full
		// at start; short timeouts let a killed node leave the group in
		// about two seconds instead of the default's five to fifteen.
		"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:" + strconv.Itoa(ports[1]) +
			";ist.recv_addr=127.0.0.1:" + strconv.Itoa(ports[2]) +
			";gcache.size=32M;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;evs.install_timeout=PT4S;evs.keepalive_period=PT0.5S"}
	if os.Geteuid() == 0 && cred == nil {
		args = append(args, "--user=root")
	}
	if i == 0 {
		args = append(args, "--wsrep-new-cluster")
	}
	p, err := startProc("galera-"+name, cred, env, filepath.Join(ndir, "server.log"), syscall.SIGTERM, bin, args...)
	if err != nil {
		return nil, err
	}
	rctx, cancel := testtime.Context(ctx, galeraReadyTimeout)
	defer cancel()
	if err := waitSynced(rctx, p, "root@unix("+sock+")/"); err != nil {
		_ = p.kill()
		return nil, err
	}
	if err := ensureTCPRoot(ctx, "root@unix("+sock+")/", ports[0]); err != nil {
		_ = p.kill()
		return nil, err
	}
	node := &GaleraNode{Name: name, Port: ports[0], proc: p}
	if node.base, err = mysql.ParseDSN(fmt.Sprintf("root@tcp(127.0.0.1:%d)/?%s", ports[0], mysqlParams)); err != nil {
		_ = p.kill()
		return nil, err
	}
	return node, nil
}

// galeraCredential is who runs a node: as root, the "mysql" user (the
// joiner's rsync daemon, started by wsrep_sst_rsync without a uid in its
// configuration, would drop root for "nobody" and fail to write the data
// directory), after giving it dir; otherwise the current user.
func galeraCredential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("mysql")
	if err != nil {
		return nil, galeraSkip("running as root and there is no \"mysql\" user to run the nodes as: " + err.Error())
	}
	uid, _ := strconv.Atoi(u.Uid)
	// Every directory above the cluster's must be passable for it.
	gid, _ := strconv.Atoi(u.Gid)
	err = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// waitSynced waits until the node answers and reports wsrep_local_state
// 4 (Synced): a joiner answers SQL before its state transfer completes.
func waitSynced(ctx context.Context, p *proc, dsn string) error {
	var last error
	for {
		last = synced(ctx, dsn)
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited during start-up (%v); log %s:\n%s", p.name, p.waitErr, p.logPath, p.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s not synced with the cluster (%v), last: %v; log %s:\n%s", p.name, ctx.Err(), last, p.logPath, p.logTail())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func synced(ctx context.Context, dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	qctx, cancel := testtime.Context(ctx, 2*time.Second)
	defer cancel()
	var name, state string
	if err := db.QueryRowContext(qctx, "SHOW STATUS LIKE 'wsrep_local_state'").Scan(&name, &state); err != nil {
		return err
	}
	if state != "4" {
		return fmt.Errorf("wsrep_local_state %s", state)
	}
	return nil
}

// CreateDatabase creates an empty database (replicated to every node) and
// returns its name.
func (c *GaleraCluster) CreateDatabase(ctx context.Context) (string, error) {
	db, err := sql.Open("mysql", c.Nodes[0].DSN(""))
	if err != nil {
		return "", err
	}
	defer db.Close()
	name := newDBName()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		return "", fmt.Errorf("create database on the Galera cluster: %w", err)
	}
	return name, nil
}

// Close kills every node and removes the cluster's files (a throw-away
// cluster: nothing is lost by not shutting it down).
func (c *GaleraCluster) Close() error {
	for _, n := range c.Nodes {
		_ = n.proc.kill()
	}
	return os.RemoveAll(c.dir)
}
