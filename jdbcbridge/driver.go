package jdbcbridge

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
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
	// CancelGrace is how long to wait for a canceled statement before closing the socket
	// (default 2s).
	CancelGrace time.Duration
	// DialTimeout bounds connecting and the handshake (default 10s).
	DialTimeout time.Duration
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
	d := net.Dialer{Timeout: c.cfg.DialTimeout}
	nc, err := d.DialContext(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("jdbcbridge: dial %s: %w", c.cfg.Addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	cn := &conn{
		cfg: c.cfg,
		nc:  nc,
		r:   bufio.NewReaderSize(nc, 64<<10),
	}
	deadline := time.Now().Add(c.cfg.DialTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = nc.SetDeadline(deadline)
	if err := cn.handshake(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return cn, nil
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
