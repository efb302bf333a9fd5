package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/schema"
)

// ErrKeyCollation is wrapped by *KeyCollationError.
var ErrKeyCollation = errors.New("key column compares text ignoring case")

// KeyCollationError refuses a schema in which a key column of the core's
// tables compares text ignoring case (the dialect's KeyCollation check):
// two names that differ only in case would be one key.
type KeyCollationError struct {
	Table, Column, Collation string
	Remedy                   string
}

func (e *KeyCollationError) Error() string {
	return fmt.Sprintf("table %s, key column %s has the collation %s, which compares ignoring case (\"src\" and \"Src\" would be one key); %s",
		e.Table, e.Column, e.Collation, e.Remedy)
}

// Unwrap makes errors.Is(err, ErrKeyCollation) hold.
func (e *KeyCollationError) Unwrap() error { return ErrKeyCollation }

// checkKeyCollation runs the dialect's KeyCollation check; a row that
// names one of the core's tables refuses the start. Other tables of the
// database (the application's) are not the core's business.
func (e *Engine) checkKeyCollation(ctx context.Context, q Querier) error {
	c := e.Cat.KeyCollation
	if c.Query == "" {
		return nil
	}
	mine := map[string]bool{}
	for _, o := range schema.Objects(e.Cat, e.Names) {
		mine[strings.ToLower(o.Name)] = true
	}
	rs, err := q.QueryContext(ctx, c.Query)
	if err != nil {
		return fmt.Errorf("reading the key columns' collations: %w", e.Errors.Wrap(err))
	}
	defer rs.Close()
	for rs.Next() {
		var table, column, collation string
		if err := rs.Scan(&table, &column, &collation); err != nil {
			return fmt.Errorf("reading the key columns' collations: %w", err)
		}
		if mine[strings.ToLower(table)] {
			return &KeyCollationError{Table: table, Column: column, Collation: collation, Remedy: c.Remedy}
		}
	}
	return rs.Err()
}
