package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/topic"
	"github.com/tidemarkdb/tidemark/internal/console"
)

// envConsoleToken is where --token is read from when not given, so the
// token need not show in the process list.
const envConsoleToken = "TIDEMARK_CONSOLE_TOKEN"

// serveFlags are `tidemark serve`'s own flags.
type serveFlags struct {
	listen       string
	token        string
	tlsCert      string
	tlsKey       string
	insecureHTTP bool
	readOnly     bool
	refresh      time.Duration
}

// consoleServeCmd is `tidemark serve`: the operator console.
func consoleServeCmd() *cobra.Command {
	var s settings
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the operator console: marks, consumers, lag, dead letters and leases, with the operator's actions, /metrics and /healthz",
		Long: `Serves a web console on --listen (loopback by default) over the configured
database, opened verify-only: it creates nothing. The actions are the calls of
` + "`tidemark consumers …`" + `; each writes an audit line. A listen address beyond
loopback needs --token (or $` + envConsoleToken + `) and TLS (--tls-cert, --tls-key)
or an explicit --insecure-http.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.token == "" {
				f.token = os.Getenv(envConsoleToken)
			}
			loopback, err := checkListen(f)
			if err != nil {
				return err
			}
			mode := engine.Config{Existing: true}
			if f.readOnly {
				mode = engine.Config{ReadOnly: true}
			}
			return withOperator(cmd.Context(), &s, mode, func(op *consumer.Operator) error {
				return serveConsole(cmd.Context(), op, f, loopback, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	s.register(cmd, withPlugin|withDB|withNames)
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7464", "address to listen on (beyond loopback it needs --token and TLS or --insecure-http)")
	fl.StringVar(&f.token, "token", "", "access token every request must carry (default: $"+envConsoleToken+")")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM), with --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file (PEM), with --tls-cert")
	fl.BoolVar(&f.insecureHTTP, "insecure-http", false, "allow plain HTTP beyond loopback (every page then shows a warning)")
	fl.BoolVar(&f.readOnly, "read-only", false, "hide every action and open the engine read-only")
	fl.DurationVar(&f.refresh, "refresh", 5*time.Second, "reload the pages this often (0: never)")
	cmd.MarkFlagsRequiredTogether("tls-cert", "tls-key")
	return cmd
}

// checkListen refuses, before the database is opened, a listen address
// beyond loopback without a token, or without TLS or --insecure-http.
func checkListen(f serveFlags) (loopback bool, err error) {
	loopback, err = console.IsLoopbackListen(f.listen)
	if err != nil || loopback {
		return loopback, err
	}
	if f.token == "" {
		return false, fmt.Errorf("%w: --listen %s is beyond loopback: pass --token (or set $%s)", console.ErrInsecureListen, f.listen, envConsoleToken)
	}
	if f.tlsCert == "" && !f.insecureHTTP {
		return false, fmt.Errorf("%w: --listen %s is beyond loopback: pass --tls-cert and --tls-key, or --insecure-http to serve plain HTTP", console.ErrInsecureListen, f.listen)
	}
	return false, nil
}

// serveConsole serves the console on op until ctx ends: the address on
// out, the audit lines on logOut.
func serveConsole(ctx context.Context, op *consumer.Operator, f serveFlags, loopback bool, out, logOut io.Writer) error {
	logger := slog.New(slog.NewTextHandler(logOut, nil))
	srv, err := console.New(op, console.Options{ReadOnly: f.readOnly, Token: f.token, InsecureHTTP: !loopback && f.tlsCert == "",
		LoopbackOnly: loopback, Refresh: f.refresh, Sources: consoleSources(op.Engine()), Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(out, "tidemark console on %s://%s/ (Ctrl-C stops it)\n", scheme, ln.Addr())
	done := make(chan error, 1)
	go func() {
		if f.tlsCert != "" {
			done <- hs.ServeTLS(ln, f.tlsCert, f.tlsKey)
		} else {
			done <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// consoleSources resolves the sources the console reads payloads from and
// checks skips against. The capture topic is only used when its mark row
// exists: topic.New on a writable engine would seed it, and the console
// creates nothing.
func consoleSources(e *engine.Engine) console.SourceFunc {
	return func(ctx context.Context, name string) (consumer.Source, error) {
		if name == topic.CaptureTopic {
			if _, err := e.ReadMarkRow(ctx, e.DB, name); errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("topic %s has no mark row: nothing was published to it", name)
			} else if err != nil {
				return nil, err
			}
		}
		return sourceOf(ctx, e, name)
	}
}
