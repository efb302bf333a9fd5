// Package publication keeps EVENT_PUBLICATION_METADATA: the serialised
// message metadata of each durable event publication, keyed by the
// publication's id, so the metadata survives a restart and is restored
// when an outstanding publication is resubmitted. The table takes no
// prefix. Writes run in the caller's transaction (or on the engine's
// pool); a completion date is the application's (the publication's own),
// stored with its zone where the engine's column has one.
package publication

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/sqlerr"
	"github.com/tidemarkdb/tidemark/core/stmt"
)

// MaxIDLength is PUBLICATION_ID's width (a UUID as text).
const MaxIDLength = 36

// InvalidError reports an argument refused before any SQL runs.
type InvalidError struct{ What, Reason string }

func (e *InvalidError) Error() string {
	return fmt.Sprintf("publication metadata: %s %s", e.What, e.Reason)
}

// ConflictError reports a first Put of a publication id that met another
// first Put of it on the primary key. It is transient: run again, the Put
// finds the other's row and replaces its metadata (a Put with a nil
// Querier does so itself; a caller's transaction is rolled back by some
// engines on the violation, so the caller runs it again).
type ConflictError struct {
	PublicationID string
	Err           error // the engine's unique violation
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("publication metadata %s: stored concurrently by another transaction: %v", e.PublicationID, e.Err)
}

// Unwrap gives the engine's error.
func (e *ConflictError) Unwrap() error { return e.Err }

// Transient makes engine.InTx (and the caller's retry) run the Put again.
func (e *ConflictError) Transient() bool { return true }

// Store reads and writes EVENT_PUBLICATION_METADATA.
type Store struct{ e *engine.Engine }

// New returns the store of e's publication metadata table.
func New(e *engine.Engine) *Store { return &Store{e: e} }

// Row is one publication's metadata.
type Row struct {
	PublicationID string
	// Metadata is the serialised metadata (JSON).
	Metadata []byte
	// CompletionDate is when the publication completed; nil while it is
	// outstanding.
	CompletionDate *time.Time
}

func checkID(id string) error {
	if id == "" || len(id) > MaxIDLength {
		return &InvalidError{What: "publication id " + fmt.Sprintf("%q", id), Reason: fmt.Sprintf("must be 1 to %d characters", MaxIDLength)}
	}
	return nil
}

// Put stores metadata for publicationID in q (a *sql.Tx to write with the
// publication, or nil for a transaction of its own), replacing what it
// held. The metadata must be a JSON document. Two first Puts of one id
// meet on the primary key: with q nil the loser runs again and replaces
// the winner's metadata; in a caller's transaction it returns a transient
// *ConflictError for the caller to run the transaction again.
func (s *Store) Put(ctx context.Context, q engine.Querier, publicationID string, metadata []byte) error {
	if err := checkID(publicationID); err != nil {
		return err
	}
	if !json.Valid(metadata) {
		return &InvalidError{What: "metadata", Reason: "must be a JSON document"}
	}
	if q == nil {
		return s.e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
			return s.put(ctx, tx, publicationID, string(metadata))
		})
	}
	return s.put(ctx, q, publicationID, string(metadata))
}

func (s *Store) put(ctx context.Context, q engine.Querier, id, metadata string) error {
	p := stmt.PublicationUpdateParams{PublicationID: id, MetadataText: metadata}
	res, err := stmt.ExecPublicationUpdate(ctx, s.e, q, p)
	if err != nil {
		return fmt.Errorf("publication metadata %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	// No row updated: none is there, or (MySQL/MariaDB count changed rows,
	// not matched ones) the row already holds this metadata.
	r, err := stmt.QueryRowPublicationGet(ctx, s.e, q, stmt.PublicationGetParams{PublicationID: id})
	switch {
	case err == nil && sameJSON(r.MetadataText, metadata):
		return nil
	case err == nil: // stored by another transaction since the update
		return &ConflictError{PublicationID: id, Err: errors.New("a row appeared after the update found none")}
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("publication metadata %s: %w", id, err)
	}
	if _, err := stmt.ExecPublicationInsert(ctx, s.e, q, stmt.PublicationInsertParams(p)); err != nil {
		if errors.Is(err, sqlerr.ErrUniqueViolation) {
			return &ConflictError{PublicationID: id, Err: err}
		}
		return fmt.Errorf("publication metadata %s: %w", id, err)
	}
	return nil
}

// sameJSON reports whether two JSON documents are equal as values (an
// engine may store them reformatted).
func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// Get reads publicationID's row (false when there is none).
func (s *Store) Get(ctx context.Context, publicationID string) (Row, bool, error) {
	if err := checkID(publicationID); err != nil {
		return Row{}, false, err
	}
	r, err := stmt.QueryRowPublicationGet(ctx, s.e, s.e.DB, stmt.PublicationGetParams{PublicationID: publicationID})
	if errors.Is(err, sql.ErrNoRows) {
		return Row{}, false, nil
	}
	if err != nil {
		return Row{}, false, fmt.Errorf("publication metadata %s: %w", publicationID, err)
	}
	row := Row{PublicationID: publicationID, Metadata: []byte(r.MetadataText)}
	if t := time.Time(r.CompletionDate); !t.IsZero() {
		row.CompletionDate = &t
	}
	return row, true, nil
}

// MarkCompleted records at as publicationID's completion date on the
// engine's pool; false when no row holds it.
func (s *Store) MarkCompleted(ctx context.Context, publicationID string, at time.Time) (bool, error) {
	return s.MarkCompletedTx(ctx, nil, publicationID, at)
}

// MarkCompletedTx is MarkCompleted in q: the caller's transaction, so the
// completion commits with what completed the publication (nil: the
// engine's pool).
func (s *Store) MarkCompletedTx(ctx context.Context, q engine.Querier, publicationID string, at time.Time) (bool, error) {
	if err := checkID(publicationID); err != nil {
		return false, err
	}
	if at.IsZero() {
		return false, &InvalidError{What: "completion date", Reason: "must be set"}
	}
	if q == nil {
		q = s.e.DB
	}
	at = s.e.Cat.Facts.CutEventTime(at.UTC())
	res, err := stmt.ExecPublicationComplete(ctx, s.e, q, stmt.PublicationCompleteParams{PublicationID: publicationID, CompletionDate: at})
	if err != nil {
		return false, fmt.Errorf("publication metadata %s: %w", publicationID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Delete deletes publicationID's row in q (the caller's transaction, or
// nil for the engine's pool); false when there was none.
func (s *Store) Delete(ctx context.Context, q engine.Querier, publicationID string) (bool, error) {
	if err := checkID(publicationID); err != nil {
		return false, err
	}
	if q == nil {
		q = s.e.DB
	}
	res, err := stmt.ExecPublicationDelete(ctx, s.e, q, stmt.PublicationDeleteParams{PublicationID: publicationID})
	if err != nil {
		return false, fmt.Errorf("publication metadata %s: delete: %w", publicationID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PurgeCompleted deletes the rows completed more than olderThan before
// the database clock's now; it returns how many it deleted.
func (s *Store) PurgeCompleted(ctx context.Context, olderThan time.Duration) (int64, error) {
	if olderThan < 0 {
		return 0, &InvalidError{What: "purge age", Reason: "must not be negative"}
	}
	var n int64
	err := s.e.InTx(ctx, engine.OpWrite, engine.TransientRetry{}, func(tx *sql.Tx) error {
		now, err := stmt.QueryRowDatabaseNow(ctx, s.e, tx)
		if err != nil {
			return err
		}
		cutoff := s.e.Cat.Facts.CutEventTime(time.Time(now.Now).Add(-olderThan))
		res, err := stmt.ExecPublicationPurge(ctx, s.e, tx, stmt.PublicationPurgeParams{Cutoff: cutoff})
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("publication metadata: purge: %w", err)
	}
	return n, nil
}
