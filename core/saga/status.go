package saga

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// TypeStatus is one saga type of one instance table, as the operator sees
// it (no declaration needed).
type TypeStatus struct {
	Table     string `json:"table"`
	SagaType  string `json:"saga_type"`
	Active    int64  `json:"active"`
	Completed int64  `json:"completed"`
	// Deadlines are its pending deadlines, NextDue the earliest one's
	// due time (nil with none), Overdue those already due on the database
	// clock and not delivered yet (a deliverer that keeps up leaves at most
	// a poll's worth; more says none runs, or it fails).
	Deadlines int64      `json:"deadlines"`
	NextDue   *time.Time `json:"next_due,omitempty"`
	Overdue   int64      `json:"overdue"`
}

// LockStatus is the deadline lock row.
type LockStatus struct {
	Owner     string    `json:"owner"`
	ExpiresAt time.Time `json:"expires_at"`
	// Live: not expired on the database clock.
	Live bool `json:"live"`
}

// Status is every saga type's counts and the deadline lock (nil when no
// process holds or held it).
type Status struct {
	Types []TypeStatus `json:"types"`
	Lock  *LockStatus  `json:"lock,omitempty"`
}

// ReadStatus reads the counts of every saga table of e and the deadline
// lock; it only reads.
func ReadStatus(ctx context.Context, e *engine.Engine) (Status, error) {
	var st Status
	byType := map[string]*TypeStatus{}
	for _, table := range e.Names.SagaTables {
		rows, err := stmt.QuerySagaCounts(ctx, e, e.DB, stmt.SagaCountsParams{SagaInstancesTable: table})
		if err != nil {
			return st, fmt.Errorf("saga status of %s: %w", table, err)
		}
		err = eachRow(rows, func(r stmt.SagaCountsRow) {
			st.Types = append(st.Types, TypeStatus{Table: table, SagaType: r.SagaType, Completed: r.CompletedCount, Active: r.N - r.CompletedCount})
		})
		if err != nil {
			return st, fmt.Errorf("saga status of %s: %w", table, err)
		}
	}
	for i := range st.Types {
		byType[st.Types[i].SagaType] = &st.Types[i]
	}
	rows, err := stmt.QuerySagaDeadlineCounts(ctx, e, e.DB)
	if err != nil {
		return st, fmt.Errorf("saga deadlines status: %w", err)
	}
	var orphans []TypeStatus
	err = eachRow(rows, func(r stmt.SagaDeadlineCountsRow) {
		next := time.Time(r.NextDue)
		t := byType[r.SagaType]
		if t == nil {
			orphans = append(orphans, TypeStatus{SagaType: r.SagaType})
			t = &orphans[len(orphans)-1]
		}
		t.Deadlines, t.NextDue, t.Overdue = r.N, &next, r.Overdue
	})
	if err != nil {
		return st, fmt.Errorf("saga deadlines status: %w", err)
	}
	st.Types = append(st.Types, orphans...)
	sort.SliceStable(st.Types, func(i, j int) bool { return st.Types[i].SagaType < st.Types[j].SagaType })
	l, err := stmt.QueryRowSagaLockRead(ctx, e, e.DB, stmt.SagaLockReadParams{LockName: DeliveryLock})
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return st, fmt.Errorf("saga deadline lock: %w", err)
	default:
		st.Lock = &LockStatus{Owner: l.Owner, ExpiresAt: time.Time(l.ExpiresAt), Live: l.Live != 0}
	}
	return st, nil
}

func eachRow[R any](rows stmt.Rows[R], fn func(R)) error {
	defer rows.Close()
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return err
		}
		fn(r)
	}
	return rows.Err()
}

// Listed is one instance as List reads it (its state is not decoded).
type Listed struct {
	Table     string `json:"table"`
	ID        string `json:"id"`
	SagaType  string `json:"saga_type"`
	SagaID    string `json:"saga_id"`
	Version   int64  `json:"version"`
	Completed bool   `json:"completed"`
}

// List reads up to limit instances of every saga table of e (of sagaType
// only, when not empty), by table, saga type and saga id. The database
// filters the saga type and stops at the limit. A limit below 1 is a
// *DeclarationError, before any SQL.
func List(ctx context.Context, e *engine.Engine, sagaType string, limit int) ([]Listed, error) {
	if limit < 1 {
		return nil, &DeclarationError{SagaType: sagaType, What: fmt.Sprintf("a list limit must be positive, got %d", limit)}
	}
	var out []Listed
	for _, table := range e.Names.SagaTables {
		if len(out) >= limit {
			break
		}
		rows, err := listRows(ctx, e, table, sagaType, limit-len(out))
		if err != nil {
			return nil, fmt.Errorf("saga list of %s: %w", table, err)
		}
		err = func() error {
			defer rows.Close()
			for rows.Next() {
				r, err := rows.Row()
				if err != nil {
					return err
				}
				out = append(out, Listed{Table: table, ID: string(r.ID), SagaType: r.SagaType, SagaID: r.SagaID, Version: r.Version, Completed: r.Completed != 0})
			}
			return rows.Err()
		}()
		if err != nil {
			return nil, fmt.Errorf("saga list of %s: %w", table, err)
		}
	}
	return out, nil
}

// listRows reads up to limit instances of table: of sagaType only when it
// is not empty.
func listRows(ctx context.Context, e *engine.Engine, table, sagaType string, limit int) (stmt.Rows[stmt.SagaListRow], error) {
	if sagaType == "" {
		return stmt.QuerySagaList(ctx, e, e.DB, stmt.SagaListParams{Limit: limit, SagaInstancesTable: table})
	}
	return stmt.QuerySagaListType(ctx, e, e.DB, stmt.SagaListTypeParams{SagaType: sagaType, Limit: limit, SagaInstancesTable: table})
}

// PurgeType is Store.Purge without the declaration: it deletes the
// completed instances of sagaType in table (one of e's saga tables) older
// than olderThan on the database clock, except those with a pending
// deadline.
func PurgeType(ctx context.Context, e *engine.Engine, table, sagaType string, olderThan time.Duration) (int64, error) {
	switch {
	case !slices.Contains(e.Names.SagaTables, table):
		return 0, &DeclarationError{SagaType: sagaType, What: fmt.Sprintf("saga table %q is not one of %v", table, e.Names.SagaTables)}
	case sagaType == "":
		return 0, &DeclarationError{What: "a purge needs a saga type"}
	case olderThan < 0:
		return 0, &DeclarationError{SagaType: sagaType, What: "a purge age must not be negative"}
	}
	var n int64
	err := e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		res, err := stmt.ExecSagaPurge(ctx, e, tx, stmt.SagaPurgeParams{SagaType: sagaType, CutoffMillis: -olderThan.Milliseconds(), SagaInstancesTable: table})
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("saga %q: purge: %w", sagaType, err)
	}
	return n, nil
}
