// Package console is the operator console behind `tidemark serve`: a
// server-rendered page set (html/template, embedded templates, no script
// build) over the consumer Operator — marks, consumers with their lag,
// undelivered messages and dead letters, partition leases — with the
// operator's actions as POST forms, plus /metrics (Prometheus text) and
// /healthz.
//
// Every action is the Operator call the CLI makes, checked against a CSRF
// token, written to the audit log and answered with what it changed. The
// console never shows the DSN; html/template escapes every value read from
// the database.
package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// DefaultPayloadCap is how many bytes of a message's payload a page shows
// when Options.PayloadCap is 0.
const DefaultPayloadCap = 4096

// tokenCookie carries the access token after a browser presented it once.
const tokenCookie = "tidemark_console_token"

// Options configure a console.
type Options struct {
	// ReadOnly hides every action and refuses every POST.
	ReadOnly bool
	// Token, when set, is required on every request but /healthz: as
	// "Authorization: Bearer <token>", as ?token= (which sets a cookie), or
	// as that cookie.
	Token string
	// InsecureHTTP says the console listens beyond loopback without TLS:
	// every page shows a warning banner.
	InsecureHTTP bool
	// LoopbackOnly refuses requests whose Host is not a loopback name, so a
	// page of another site cannot reach the console by DNS rebinding.
	LoopbackOnly bool
	// Refresh reloads every page this often (0: never).
	Refresh time.Duration
	// StallAfter is how long a topic's mark may stand still below a
	// recorded pending end before /healthz reports it (default 1 min).
	StallAfter time.Duration
	// PayloadCap caps the payload bytes shown (DefaultPayloadCap when 0).
	PayloadCap int
	// Sources resolves a source by name, for skips and payloads; nil: no
	// payloads and no skips.
	Sources SourceFunc
	// Logger receives the audit lines (slog.Default when nil).
	Logger *slog.Logger
	// Now is the clock for rates and stalls (time.Now when nil).
	Now func() time.Time
}

// Server is the console's HTTP handler.
type Server struct {
	op    *consumer.Operator
	opts  Options
	csrf  string
	pages map[string]*template.Template
	mux   *http.ServeMux

	mu    sync.Mutex
	rates map[string]sample
	marks map[string]markSeen
}

// New builds the console on op.
func New(op *consumer.Operator, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PayloadCap <= 0 {
		opts.PayloadCap = DefaultPayloadCap
	}
	if opts.StallAfter <= 0 {
		opts.StallAfter = time.Minute
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("console: CSRF token: %w", err)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{op: op, opts: opts, csrf: hex.EncodeToString(b[:]), pages: pages,
		rates: map[string]sample{}, marks: map[string]markSeen{}}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /{$}", s.page("overview", s.overview))
	s.mux.HandleFunc("GET /consumers", s.page("consumers", s.consumers))
	s.mux.HandleFunc("GET /undelivered", s.page("undelivered", s.undelivered))
	s.mux.HandleFunc("GET /leases", s.page("leases", s.leases))
	s.mux.HandleFunc("GET /sagas", s.page("sagas", s.sagas))
	s.mux.HandleFunc("POST /action", s.action)
	s.mux.HandleFunc("GET /metrics", s.metrics)
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.Handle("GET /static/", http.FileServerFS(staticFS))
	return s, nil
}

// ServeHTTP checks the Host and the token, sets the page's security
// headers and routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.LoopbackOnly && !loopbackHost(r.Host) {
		http.Error(w, "console: this console answers loopback names only (localhost, 127.0.0.1, [::1])", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: with no-referrer a browser sends "Origin: null"
	// on a form POST, and the CSRF check needs the real origin.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if r.URL.Path != "/healthz" && !s.authorized(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized checks the access token, when one is configured; a ?token= on
// a GET sets the cookie and redirects to the same page without it, so the
// token leaves the address bar and the history.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet && s.tokenMatches(q) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true,
			Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		v := u.Query()
		v.Del("token")
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenMatches(bearer) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && s.tokenMatches(c.Value) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="tidemark console"`)
	http.Error(w, "console: a token is required (open the console with ?token=<token> once, or send Authorization: Bearer <token>)", http.StatusUnauthorized)
	return false
}

func (s *Server) tokenMatches(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// loopbackHost says host (a Host header, maybe with a port) names the
// loopback interface.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackListen says addr (a --listen value) binds loopback only; an
// empty host binds every interface.
func IsLoopbackListen(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		return false, nil
	}
	return loopbackHost(host), nil
}

// ErrInsecureListen refuses a listen address beyond loopback without the
// safeguards it needs.
var ErrInsecureListen = errors.New("insecure listen address")
