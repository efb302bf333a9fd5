package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// SchemaLockName is the name the core binds as #{name} in the dialect's
// SchemaLock statements.
const SchemaLockName = "tidemark.schema"

// seedAttempts bounds the retries of a seed that lost a serialization race;
// 10 was never exhausted with 4 processes seeding one HSQLDB at once.
const seedAttempts = 10

// ErrSchemaLock is wrapped when the dialect's SchemaLock cannot be taken.
var ErrSchemaLock = errors.New("schema lock not obtained")

// create checks the facts an earlier start seeded, creates (or verifies)
// the schema and seeds, all under the dialect's schema lock when it has one,
// so concurrent first starts create the schema one after the other and the
// loser of a partition-count race sees the winner's count before any DDL.
func (e *Engine) create(ctx context.Context, cfg Config, steps []schema.Step) error {
	return e.withSchemaLock(ctx, cfg, func(q Querier) error {
		if err := e.checkSettings(ctx, q); err != nil {
			return err
		}
		if err := e.checkSeededFacts(ctx, q); err != nil {
			return err
		}
		if err := e.ensureSchema(ctx, q, cfg, steps); err != nil {
			return err
		}
		if err := e.checkKeyCollation(ctx, q); err != nil {
			return err
		}
		return e.seed(ctx, q, cfg)
	})
}

// withSchemaLock runs fn on one connection holding the dialect's schema
// lock, or on the pool when the dialect has none or nothing is created.
func (e *Engine) withSchemaLock(ctx context.Context, cfg Config, fn func(Querier) error) error {
	lock := e.Cat.SchemaLock
	if lock.Acquire == "" || !createsAnything(cfg.Modes) {
		return fn(e.DB)
	}
	conn, err := e.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := e.lockStatement(ctx, conn, lock.Acquire); err != nil {
		return fmt.Errorf("%w: %w", ErrSchemaLock, err)
	}
	ferr := fn(conn)
	if err := e.lockStatement(context.WithoutCancel(ctx), conn, lock.Release); err != nil {
		// A session lock left behind must not go back to the pool: a
		// broken connection is discarded, which frees the lock with it.
		slog.Warn("tidemark: releasing the schema lock failed; discarding its connection", "err", err)
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return ferr
}

func (e *Engine) lockStatement(ctx context.Context, conn *sql.Conn, stmt string) error {
	c := dialect.Compile(stmt, e.Cat.Identity.Placeholder)
	args, err := c.Args(map[string]any{"name": SchemaLockName})
	if err != nil {
		return err
	}
	var v any
	if err := conn.QueryRowContext(ctx, c.SQL, args...).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if lockRefused(v) {
		return fmt.Errorf("%s returned %v", strings.Fields(c.SQL)[0], v)
	}
	return nil
}

// lockRefused is true for a 0 or false result (NULL and void mean done).
func lockRefused(v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case int64:
		return x == 0
	case []byte:
		return string(x) == "0" || strings.EqualFold(string(x), "false")
	case string:
		return x == "0" || strings.EqualFold(x, "false")
	}
	return false
}

func createsAnything(modes map[dialect.Area]schema.Mode) bool {
	for _, a := range []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging, dialect.AreaCQRS, dialect.AreaSaga, dialect.AreaPublication} {
		if modes[a] != schema.Never {
			return true
		}
	}
	return false
}

// isCreationRace says whether a failed DDL step lost a race with another
// process creating the same object: it is then run again (and finds the
// object). A unique violation of DDL is PostgreSQL's catalogue race
// (pg_type, pg_class) on engines without a lock, or a script's own seed
// row inserted by the other process (H2's counter rows: a primary-key
// violation, classified as a duplicate id).
func (e *Engine) isCreationRace(err error) bool {
	switch e.Errors.Classify(err) {
	case dialect.ErrDuplicateObject, dialect.ErrUniqueViolation, dialect.ErrDuplicateEventID, dialect.ErrSerializationFailure, dialect.ErrDeadlock:
		return true
	}
	return false
}

// checkSeededFacts reads what an earlier start persisted before anything
// is created: a partition count other than the configured one stops the
// start with *PartitionMismatchError while the database is unchanged.
func (e *Engine) checkSeededFacts(ctx context.Context, q Querier) error {
	table := e.Names.Shared["partition_metadata_table"]
	ok, err := schema.TableExists(ctx, q, e.Cat, table)
	if err != nil || !ok {
		return err
	}
	var persisted sql.NullInt64
	err = e.QueryRow(ctx, q, dialect.PartitionRead, nil, nil).Scan(&persisted)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !persisted.Valid) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading partition metadata: %w", err)
	}
	if int(persisted.Int64) != e.Partitions {
		return &PartitionMismatchError{Table: table, Persisted: int(persisted.Int64), Configured: e.Partitions}
	}
	return nil
}

// pause waits a little longer on each attempt (5 ms, 10 ms, …) so racing
// processes do not retry in lockstep.
func pause(ctx context.Context, attempt int) error {
	return Sleep(ctx, time.Duration(attempt)*5*time.Millisecond)
}
