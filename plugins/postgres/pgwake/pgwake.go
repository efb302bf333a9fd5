// Package pgwake wakes Tidemark followers in any process when a PostgreSQL
// high-water mark moves: the advancer runs pg_notify('tidemark_hwm', topic)
// after every move (statement hwm.notify), and a Waker LISTENs for it on a
// dedicated connection. Polling stays the fallback: a lost connection is
// retried, and a follower's poll interval still bounds its wait.
//
// It imports pgx, which is why it is not part of the dialect package (a
// dialect imports only core/dialect).
package pgwake

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channel is the notification channel the postgres dialect notifies on.
const Channel = "tidemark_hwm"

// Waker implements eventstore.Waker from PostgreSQL notifications.
type Waker struct {
	mu      sync.Mutex
	changed chan struct{}
	topic   string
	ready   chan struct{}
	once    sync.Once
}

// Listen connects with dsn (a pgx connection string) and wakes on every
// notification for topic ("" for any topic) until ctx ends.
func Listen(ctx context.Context, dsn, topic string) *Waker {
	w := &Waker{changed: make(chan struct{}), topic: topic, ready: make(chan struct{})}
	go w.run(ctx, dsn)
	return w
}

// Ready is closed once the first LISTEN is in place.
func (w *Waker) Ready() <-chan struct{} { return w.ready }

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
