// Package pgwake wakes Tidemark followers and consumers in any process when
// a PostgreSQL high-water mark moves: the advancer runs
// pg_notify('tidemark_hwm', topic) after every move (statement hwm.notify),
// and a Waker LISTENs for it on a dedicated connection. A *Waker is a
// log.Waker, the one Waker of eventstore.FollowOptions, topic.FollowOptions,
// consumer.EventStore and consumer.Capture alike (listen for
// engine.EventStoreTopic or topic.CaptureTopic).
//
// Polling stays the fallback: a lost connection is retried with backoff,
// and a follower's poll interval still bounds its wait. A failure to
// listen is not silent: it is logged once per outage (and once more when
// listening resumes), kept as Err, and handed to an OnError callback.
//
// LISTEN runs only on a primary: on a hot standby PostgreSQL refuses it
// ("cannot execute LISTEN during recovery", SQLSTATE 25006). A Waker
// refused so gives up at once and says so (Err, Done, a warning in the
// log) instead of retrying; listen on the primary, or let followers on
// replicas poll (see docs/deployments.md).
//
// It imports pgx, which is why it is not part of the dialect package (a
// dialect imports only core/dialect).
package pgwake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemarkdb/tidemark/core/log"
)

// ErrListenRefused is wrapped by the error Err returns when the server
// refuses LISTEN for good: a hot standby (SQLSTATE 25006).
var ErrListenRefused = errors.New("LISTEN refused by the server")

// Channel is the notification channel the postgres dialect notifies on.
const Channel = "tidemark_hwm"

// Backoff bounds between listen attempts: 100 ms doubling to 5 s, so a
// restarted server is met again within seconds while a dead one costs a
// connection attempt every 5 s.
const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// A *Waker is the log's Waker, which the event store and the topics alias.
var _ log.Waker = (*Waker)(nil)

// Waker implements the core's Waker interface from PostgreSQL
// notifications.
type Waker struct {
	mu      sync.Mutex
	changed chan struct{}
	err     error // the last listen failure; nil while listening
	topic   string
	ready   chan struct{}
	once    sync.Once
	done    chan struct{} // closed when the Waker has given up

	logger  *slog.Logger
	onError func(error)
}

// Option configures Listen.
type Option func(*Waker)

// WithLogger sets the logger a listen failure is reported to (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(w *Waker) { w.logger = l } }

// OnError registers fn, called with every failed listen attempt (connect,
// LISTEN, or the connection lost while waiting), from the waker's own
// goroutine; it must not block. A failure caused by ctx's end is not
// reported.
func OnError(fn func(error)) Option { return func(w *Waker) { w.onError = fn } }

// Listen connects with dsn (a pgx connection string) and wakes on every
// notification for topic ("" for any topic) until ctx ends.
func Listen(ctx context.Context, dsn, topic string, opts ...Option) *Waker {
	w := &Waker{changed: make(chan struct{}), topic: topic, ready: make(chan struct{}), done: make(chan struct{}), logger: slog.Default()}
	for _, o := range opts {
		o(w)
	}
	go w.run(ctx, dsn)
	return w
}

// Ready is closed once the first LISTEN is in place.
func (w *Waker) Ready() <-chan struct{} { return w.ready }

// Done is closed when the Waker has given up for good: the server refused
// LISTEN (Err says why). Followers using it then wake on their poll
// interval only. Done stays open while ctx lasts otherwise: a lost
// connection is retried.
func (w *Waker) Done() <-chan struct{} { return w.done }

// Changed returns a channel closed at the next notification.
func (w *Waker) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// Err returns the last listen failure while the waker is not listening
// (followers then only poll), nil while it listens or before its first
// attempt ended.
func (w *Waker) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Waker) wake() {
	w.mu.Lock()
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

func (w *Waker) run(ctx context.Context, dsn string) {
	backoff := firstBackoff
	for ctx.Err() == nil {
		listened, err := w.listen(ctx, dsn)
		if err == nil || ctx.Err() != nil {
			continue
		}
		if listened {
			backoff = firstBackoff // a lost connection, not a refused one
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "25006" {
			// A hot standby: retrying cannot help until it is promoted.
			w.failed(fmt.Errorf("%w: %w (a hot standby cannot LISTEN: listen on the primary, or poll)", ErrListenRefused, err), true)
			w.wake() // followers re-read once, then poll
			close(w.done)
			return
		}
		w.failed(err, false)
		// Wake once: notifications may have been missed while down.
		w.wake()
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// failed records err; the first failure of an outage is logged, and so is
// giving up (final), which says no retry follows.
func (w *Waker) failed(err error, final bool) {
	w.mu.Lock()
	first := w.err == nil
	w.err = err
	w.mu.Unlock()
	switch {
	case final:
		w.logger.Warn("pgwake: not listening for high-water-mark notifications, and not retrying; followers poll",
			"channel", Channel, "topic", w.topic, "err", err)
	case first:
		w.logger.Warn("pgwake: not listening for high-water-mark notifications; retrying, followers poll meanwhile",
			"channel", Channel, "topic", w.topic, "err", err)
	}
	if w.onError != nil {
		w.onError(err)
	}
}

// listening clears the failure once LISTEN is in place again.
func (w *Waker) listening() {
	w.mu.Lock()
	was := w.err
	w.err = nil
	w.mu.Unlock()
	if was != nil {
		w.logger.Info("pgwake: listening again", "channel", Channel, "topic", w.topic)
		w.wake() // what moved while down
	}
	w.once.Do(func() { close(w.ready) })
}

// listen LISTENs until the connection fails; listened says LISTEN was in
// place before it did.
func (w *Waker) listen(ctx context.Context, dsn string) (listened bool, err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return false, err
	}
	w.listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if w.topic == "" || n.Payload == w.topic {
			w.wake()
		}
	}
}
