// Package pgwake wakes Tidemark followers in any process when a PostgreSQL
// high-water mark moves: the advancer runs pg_notify('tidemark_hwm', topic)
// after every move (statement hwm.notify), and a Waker LISTENs for it on a
// dedicated connection. Polling stays the fallback: a lost connection is
// retried, and a follower's poll interval still bounds its wait.
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
)

// ErrListenRefused is wrapped by the error Err returns when the server
// refuses LISTEN for good: a hot standby (SQLSTATE 25006).
var ErrListenRefused = errors.New("LISTEN refused by the server")

// Channel is the notification channel the postgres dialect notifies on.
const Channel = "tidemark_hwm"

// Waker implements eventstore.Waker from PostgreSQL notifications.
type Waker struct {
	mu      sync.Mutex
	changed chan struct{}
	topic   string
	ready   chan struct{}
	once    sync.Once
	done    chan struct{} // closed when the Waker has given up
	lastErr error         // guarded by mu
}

// Listen connects with dsn (a pgx connection string) and wakes on every
// notification for topic ("" for any topic) until ctx ends.
func Listen(ctx context.Context, dsn, topic string) *Waker {
	w := &Waker{changed: make(chan struct{}), topic: topic, ready: make(chan struct{}), done: make(chan struct{})}
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

// Err returns the last error of listening: nil while a LISTEN is in place;
// an error wrapping ErrListenRefused once the Waker gave up; else the
// error of the last failed attempt (retried).
func (w *Waker) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

func (w *Waker) setErr(err error) {
	w.mu.Lock()
	w.lastErr = err
	w.mu.Unlock()
}

// Changed returns a channel closed at the next notification.
func (w *Waker) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

func (w *Waker) wake() {
	w.mu.Lock()
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

func (w *Waker) run(ctx context.Context, dsn string) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if err := w.listen(ctx, dsn); err != nil && ctx.Err() == nil {
			// Wake once: notifications may have been missed while down.
			w.wake()
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "25006" {
				// A hot standby: retrying cannot help until it is promoted.
				err = fmt.Errorf("%w: %w (a hot standby cannot LISTEN: listen on the primary, or poll)", ErrListenRefused, err)
				w.setErr(err)
				slog.Warn("tidemark pgwake: not listening; followers fall back to polling", "err", err)
				close(w.done)
				return
			}
			w.setErr(err)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

func (w *Waker) listen(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	w.setErr(nil)
	w.once.Do(func() { close(w.ready) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if w.topic == "" || n.Payload == w.topic {
			w.wake()
		}
	}
}
