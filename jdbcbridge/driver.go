package jdbcbridge

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

func init() {
	sql.Register("jdbcbridge", &Driver{})
}

// Driver is the database/sql driver registered under the name "jdbcbridge".
type Driver struct{}

// Open opens a new connection for the DSN (see the package documentation).
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector parses the DSN once and returns a connector for it.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return &Connector{cfg: cfg, drv: d}, nil
}

// Config is a parsed DSN.
type Config struct {
	// Addr is the bridge server's host:port.
	Addr string
	// URL is the JDBC URL to open on the server.
	URL string
	// User and Password are passed to DriverManager.getConnection.
	User, Password string
	// Token is the bridge's shared secret (required when the server has one).
	Token string
	// Properties are extra JDBC connection properties.
	Properties map[string]string
	// FetchSize is the number of rows per batch (default 256).
	FetchSize int
	// CancelGrace is how long the server may stay silent after a cancel before the socket is
	// closed (default 2s): bytes of the answer arriving restart it.
	CancelGrace time.Duration
	// DialTimeout bounds connecting and the handshake (default 10s).
	DialTimeout time.Duration
	// TLS, when set, wraps the connection in TLS and verifies the server's certificate
	// with it (ServerName defaults to Addr's host). DSN: tls=true (system roots),
	// tlsCA=FILE (PEM roots), tlsServerName=NAME. Required for a non-loopback Addr: the
	// token and the data would cross the network in clear text.
	TLS *tls.Config
	// tlsCA and tlsServerName are kept for FormatDSN.
	tlsCA, tlsServerName string
	tlsOn                bool
}

// ParseDSN parses "jdbcbridge://HOST:PORT?url=...&user=...&password=...&token=...".
func ParseDSN(dsn string) (*Config, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("jdbcbridge: bad DSN: %w", err)
	}
	if u.Scheme != "jdbcbridge" {
		return nil, fmt.Errorf("jdbcbridge: DSN must start with jdbcbridge://")
	}
	if u.Host == "" {
		return nil, fmt.Errorf("jdbcbridge: DSN has no host:port")
	}
	q := u.Query()
	cfg := &Config{
		Addr:        u.Host,
		URL:         q.Get("url"),
		User:        q.Get("user"),
		Password:    q.Get("password"),
		Token:       q.Get("token"),
		Properties:  map[string]string{},
		FetchSize:   256,
		CancelGrace: 2 * time.Second,
		DialTimeout: 10 * time.Second,
	}
	if cfg.URL == "" {
		return nil, fmt.Errorf("jdbcbridge: DSN has no url= (JDBC URL)")
	}

	for k, vs := range q {
		switch {
		case k == "url" || k == "user" || k == "password" || k == "token":
		case k == "tls":
			on, err := strconv.ParseBool(vs[0])
			if err != nil {
				return nil, fmt.Errorf("jdbcbridge: bad tls %q", vs[0])
			}
			cfg.tlsOn = on
		case k == "tlsCA":
			cfg.tlsCA, cfg.tlsOn = vs[0], true
		case k == "tlsServerName":
			cfg.tlsServerName, cfg.tlsOn = vs[0], true
		case k == "fetchSize":
			n, err := strconv.Atoi(vs[0])
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("jdbcbridge: bad fetchSize %q", vs[0])
			}
			cfg.FetchSize = n
		case k == "cancelGrace" || k == "dialTimeout":
			d, err := time.ParseDuration(vs[0])
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("jdbcbridge: bad %s %q", k, vs[0])
			}
			if k == "cancelGrace" {
				cfg.CancelGrace = d
			} else {
				cfg.DialTimeout = d
			}
		case strings.HasPrefix(k, "prop."):
			cfg.Properties[strings.TrimPrefix(k, "prop.")] = vs[0]
		default:
			return nil, fmt.Errorf("jdbcbridge: unknown DSN parameter %q", k)
		}
	}
	if cfg.tlsOn {
		if cfg.TLS, err = tlsConfig(cfg.tlsCA, cfg.tlsServerName); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// FormatDSN renders the configuration as a DSN accepted by ParseDSN.
func (c *Config) FormatDSN() string {
	q := url.Values{}
	q.Set("url", c.URL)
	if c.User != "" {
		q.Set("user", c.User)
	}
	if c.Password != "" {
		q.Set("password", c.Password)
	}
	if c.Token != "" {
		q.Set("token", c.Token)
	}
	for k, v := range c.Properties {
		q.Set("prop."+k, v)
	}
	if c.FetchSize > 0 && c.FetchSize != 256 {
		q.Set("fetchSize", strconv.Itoa(c.FetchSize))
	}
	if c.CancelGrace > 0 && c.CancelGrace != 2*time.Second {
		q.Set("cancelGrace", c.CancelGrace.String())
	}
	if c.tlsOn || c.TLS != nil {
		q.Set("tls", "true")
	}
	if c.tlsCA != "" {
		q.Set("tlsCA", c.tlsCA)
	}
	if c.tlsServerName != "" {
		q.Set("tlsServerName", c.tlsServerName)
	}
	if c.DialTimeout > 0 && c.DialTimeout != 10*time.Second {
		q.Set("dialTimeout", c.DialTimeout.String())
	}
	return "jdbcbridge://" + c.Addr + "?" + q.Encode()
}

// Connector opens connections for one parsed DSN; use it with sql.OpenDB.
type Connector struct {
	cfg *Config
	drv *Driver
}

// NewConnector returns a connector for cfg.
func NewConnector(cfg Config) *Connector {
	c := cfg
	if c.FetchSize <= 0 {
		c.FetchSize = 256
	}
	if c.CancelGrace <= 0 {
		c.CancelGrace = 2 * time.Second
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 10 * time.Second
	}
	return &Connector{cfg: &c, drv: &Driver{}}
}

// Driver returns the jdbcbridge driver.
func (c *Connector) Driver() driver.Driver { return c.drv }

// Connect dials the bridge, performs the handshake and opens the JDBC connection.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	host, _, err := net.SplitHostPort(c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("jdbcbridge: bad address %q: %w", c.cfg.Addr, err)
	}
	if c.cfg.TLS == nil && !isLoopback(host) {
		return nil, fmt.Errorf("jdbcbridge: refusing to connect to %s without TLS: the token and the data would cross the network in clear text (set tls=true or tlsCA=FILE)", c.cfg.Addr)
	}
	d := net.Dialer{Timeout: c.cfg.DialTimeout}
	nc, err := d.DialContext(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("jdbcbridge: dial %s: %w", c.cfg.Addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if c.cfg.TLS != nil {
		tc := c.cfg.TLS.Clone()
		if tc.ServerName == "" {
			tc.ServerName = host
		}
		tconn := tls.Client(nc, tc)
		hctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
		err := tconn.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("jdbcbridge: TLS with %s: %w", c.cfg.Addr, err)
		}
		nc = tconn
	}
	cn := &conn{cfg: c.cfg, nc: nc, epoch: time.Now()}
	cn.r = bufio.NewReaderSize(progressReader{cn}, 64<<10)
	deadline := time.Now().Add(c.cfg.DialTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = nc.SetDeadline(deadline)
	if err := cn.handshake(ctx); err != nil {
		nc.Close()
		if !time.Now().Before(deadline) && ctx.Err() == nil {
			// The socket deadline cut the handshake: say so, and which
			// setting bounds it, instead of "connection lost".
			return nil, fmt.Errorf("jdbcbridge: the bridge at %s did not open the connection within dialTimeout (%v): %w", c.cfg.Addr, c.cfg.DialTimeout, err)
		}
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return cn, nil
}

// isLoopback reports whether host is "localhost" or a loopback IP address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tlsConfig verifies the server against the PEM roots in caFile (system roots when empty).
func tlsConfig(caFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("jdbcbridge: tlsCA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("jdbcbridge: tlsCA %s holds no PEM certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

func (c *conn) handshake(ctx context.Context) error {
	e := c.start(opHello)
	e.u16(protocolVersion)
	e.str(c.cfg.Token)
	d, err := c.roundTrip(ctx, e)
	if err != nil {
		return err
	}
	if v := d.u16(); v != protocolVersion {
		return fmt.Errorf("jdbcbridge: server speaks protocol %d, want %d", v, protocolVersion)
	}
	_ = d.str()              // server name
	if d.pos+4 <= len(d.b) { // older servers do not send their limit
		c.maxRequest = int(d.i32())
	}
	e = c.start(opOpen)
	e.str(c.cfg.URL)
	e.str(c.cfg.User)
	e.str(c.cfg.Password)
	keys := make([]string, 0, len(c.cfg.Properties))
	for k := range c.cfg.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.i32(int32(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.str(c.cfg.Properties[k])
	}
	d, err = c.roundTrip(ctx, e)
	if err != nil {
		if errors.Is(err, driver.ErrBadConn) {
			return fmt.Errorf("jdbcbridge: connection lost during handshake")
		}
		return err
	}
	c.product = d.str()
	return d.err
}
