package jdbcbridge

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func openErr(dsn string) error {
	db, err := sql.Open("jdbcbridge", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), backstop(2*time.Minute))
	defer cancel()
	return db.PingContext(ctx)
}

// TestURLAllowList checks that only allow-listed JDBC URLs open and H2 INIT= is refused.
func TestURLAllowList(t *testing.T) {
	s := startBridge(t)
	refused := []struct{ name, url, extra string }{
		{"other driver", "jdbc:derby:memory:x;create=true", ""},
		{"h2 implicit file", "jdbc:h2:~/evil", ""},
		{"h2 INIT", "jdbc:h2:mem:x;INIT=RUNSCRIPT FROM 'http://127.0.0.1/x.sql'", ""},
		{"h2 init lower case", "jdbc:h2:mem:x;init=CREATE ALIAS X AS 'int f(){return 1;}'", ""},
		{"h2 INIT with spaces", "jdbc:h2:mem:x; INIT =SELECT 1", ""},
		{"h2 INIT property", "jdbc:h2:mem:x", "prop.INIT=" + url.QueryEscape("RUNSCRIPT FROM 'x'")},
		{"prefix case trick", "JDBC:H2:MEM:x;INIT=SELECT 1", ""},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			dsn := testDSN(s, tc.url, "sa", "")
			if tc.extra != "" {
				dsn += "&" + tc.extra
			}
			err := openErr(dsn)
			var be *Error
			if !errors.As(err, &be) || be.State != "08004" {
				t.Fatalf("got %v, want a refusal with SQLSTATE 08004", err)
			}
		})
	}
	for _, u := range []string{"jdbc:h2:mem:allowed1", "jdbc:hsqldb:mem:allowed2"} {
		if err := openErr(testDSN(s, u, "sa", "")); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestCustomAllowList checks --allow-url-prefix replaces the defaults.
func TestCustomAllowList(t *testing.T) {
	startBridge(t)
	s, err := StartServer(context.Background(), StartOptions{AllowURLPrefixes: []string{"jdbc:hsqldb:mem:"}, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := openErr(testDSN(s, "jdbc:h2:mem:x", "sa", "")); err == nil {
		t.Error("H2 opened although only jdbc:hsqldb:mem: is allowed")
	}
	if err := openErr(testDSN(s, "jdbc:hsqldb:mem:custom", "SA", "")); err != nil {
		t.Error(err)
	}
}

// TestToken checks token enforcement and that binding a non-loopback address needs a token
// and TLS; the token never appears in the server's output.
func TestToken(t *testing.T) {
	startBridge(t)
	ctx := context.Background()
	certFile, keyFile := selfSigned(t, t.TempDir())
	for name, opts := range map[string]StartOptions{
		"no token, no TLS": {Bind: "0.0.0.0"},
		"token, no TLS":    {Bind: "0.0.0.0", Token: "s3cret-token"},
		"TLS, no token":    {Bind: "0.0.0.0", TLSCertFile: certFile, TLSKeyFile: keyFile},
	} {
		var stderr strings.Builder
		opts.Stderr = &stderr
		if s, err := StartServer(ctx, opts); err == nil {
			s.Close()
			t.Fatalf("%s: server bound 0.0.0.0", name)
		}
	}

	const token = "s3cret-token-4711"
	var stderr syncBuffer
	s, err := StartServer(ctx, StartOptions{Bind: "0.0.0.0", Token: token, TLSCertFile: certFile, TLSKeyFile: keyFile, Stderr: &stderr})
	if err != nil {
		t.Fatalf("start with token and TLS: %v", err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Errorf("Addr = %q, want a loopback address to dial", s.Addr)
	}
	good := testDSN(s, "jdbc:h2:mem:tok", "sa", "") + "&tlsCA=" + url.QueryEscape(certFile)
	if err := openErr(good); err != nil {
		t.Fatalf("right token over TLS: %v", err)
	}
	for name, tok := range map[string]string{"wrong": "nope", "missing": ""} {
		cfg, err := ParseDSN(good)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Token = tok
		err = openErr(cfg.FormatDSN())
		var be *Error
		if !errors.As(err, &be) || be.State != "28000" {
			t.Errorf("%s token: got %v, want SQLSTATE 28000", name, err)
		}
		if strings.Contains(fmt.Sprint(err), token) {
			t.Errorf("the error names the token: %v", err)
		}
	}
	if strings.Contains(stderr.String(), token) {
		t.Errorf("the server logged the token: %q", stderr.String())
	}
}

// TestTLSVerified: over TLS the driver verifies the server's certificate; a plain client
// gets no session, and a certificate from another authority is refused.
func TestTLSVerified(t *testing.T) {
	startBridge(t)
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	otherCA, _ := selfSigned(t, filepath.Join(dir, "other"))
	s, err := StartServer(context.Background(), StartOptions{TLSCertFile: certFile, TLSKeyFile: keyFile, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := testDSN(s, "jdbc:hsqldb:mem:tlsdb", "SA", "")
	if err := openErr(base + "&tlsCA=" + url.QueryEscape(certFile)); err != nil {
		t.Fatalf("TLS with the right CA: %v", err)
	}
	if err := openErr(base + "&tlsCA=" + url.QueryEscape(otherCA)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("TLS with another CA: got %v, want a certificate verification error", err)
	}
	if err := openErr(base + "&tls=true"); err == nil {
		t.Error("TLS verified a self-signed certificate against the system roots")
	}
	// Refused either way, so a short bound here cannot fail the test under load.
	plain := (&Config{Addr: s.Addr, URL: "jdbc:hsqldb:mem:tlsdb", User: "SA", DialTimeout: 3 * time.Second}).FormatDSN()
	if err := openErr(plain); err == nil {
		t.Error("a plain client got a session from a TLS server")
	}
}

// TestNoPlainTextBeyondLoopback: the driver refuses to send a token in clear text to a host
// that is not loopback.
func TestNoPlainTextBeyondLoopback(t *testing.T) {
	for _, addr := range []string{"192.0.2.1:4242", "db.example:4242", "[2001:db8::1]:4242"} {
		err := openErr("jdbcbridge://" + addr + "?url=jdbc%3Ah2%3Amem%3Ax&token=t")
		if err == nil || !strings.Contains(err.Error(), "without TLS") {
			t.Errorf("%s: got %v, want a refusal without TLS", addr, err)
		}
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and localhost and its PKCS#8
// key into dir and returns their paths.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "tidemark-jdbcbridge-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// syncBuffer is a strings.Builder safe for the server's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDSN checks DSN parsing and formatting.
func TestDSN(t *testing.T) {
	dsn := "jdbcbridge://127.0.0.1:4242?url=" + url.QueryEscape("jdbc:hsqldb:mem:x;hsqldb.tx=mvcc") +
		"&user=SA&password=p%26w&token=t&fetchSize=10&cancelGrace=500ms&prop.foo=bar"
	cfg, err := ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:4242" || cfg.URL != "jdbc:hsqldb:mem:x;hsqldb.tx=mvcc" || cfg.User != "SA" ||
		cfg.Password != "p&w" || cfg.Token != "t" || cfg.FetchSize != 10 || cfg.CancelGrace != 500*time.Millisecond ||
		cfg.Properties["foo"] != "bar" {
		t.Fatalf("parsed %+v", cfg)
	}
	again, err := ParseDSN(cfg.FormatDSN())
	if err != nil || again.URL != cfg.URL || again.Password != cfg.Password || again.FetchSize != 10 {
		t.Fatalf("round trip: %+v, %v", again, err)
	}
	for _, bad := range []string{"postgres://x", "jdbcbridge://h:1", "jdbcbridge://h:1?url=jdbc:h2:mem:x&bogus=1", "jdbcbridge://?url=x"} {
		if _, err := ParseDSN(bad); err == nil {
			t.Errorf("ParseDSN(%q) accepted", bad)
		}
	}
}
