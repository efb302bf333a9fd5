package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// ErrEngineSetting is wrapped by *EngineSettingError.
var ErrEngineSetting = errors.New("database setting a guarantee relies on is wrong")

// EngineSettingError reports a database setting (a dialect.EngineCheck)
// that is not what the core's guarantees need and could not be fixed.
type EngineSettingError struct {
	Check  string
	Got    string
	Want   string
	Fix    string // the statement tried, if any
	Cause  error  // why Fix failed, if it was tried
	Remedy string
}

func (e *EngineSettingError) Error() string {
	msg := fmt.Sprintf("%s: the database has %q, %q is needed", e.Check, e.Got, e.Want)
	if e.Fix != "" {
		msg += fmt.Sprintf("; running %q failed: %v", e.Fix, e.Cause)
	}
	return msg + "; " + e.Remedy
}

// Unwrap makes errors.Is(err, ErrEngineSetting) hold and keeps the cause.
func (e *EngineSettingError) Unwrap() []error { return []error{ErrEngineSetting, e.Cause} }

// checkSettings reads every engine check before any DDL runs and fixes what
// it may; a setting that stays wrong refuses the start.
func (e *Engine) checkSettings(ctx context.Context, q Querier) error {
	for _, c := range e.Cat.Checks {
		got, err := readSetting(ctx, q, c)
		if err != nil {
			return err
		}
		if strings.EqualFold(got, c.Want) {
			continue
		}
		serr := &EngineSettingError{Check: c.Name, Got: got, Want: c.Want, Remedy: c.Remedy}
		if c.Fix == "" {
			return serr
		}
		serr.Fix = c.Fix
		if _, err := q.ExecContext(ctx, c.Fix); err != nil {
			// Another process starting at the same time may have fixed it
			// first (its fix is why this one failed): read it again.
			if again, rerr := readSetting(ctx, q, c); rerr == nil && strings.EqualFold(again, c.Want) {
				continue
			}
			serr.Cause = e.Errors.Wrap(err)
			return serr
		}
		if got, err = readSetting(ctx, q, c); err != nil {
			return err
		}
		if !strings.EqualFold(got, c.Want) {
			serr.Got, serr.Cause = got, errors.New("the setting did not change")
			return serr
		}
	}
	return nil
}

func readSetting(ctx context.Context, q Querier, c dialect.EngineCheck) (string, error) {
	var v any
	if err := q.QueryRowContext(ctx, c.Query).Scan(&v); err != nil {
		return "", fmt.Errorf("reading %s: %w", c.Name, err)
	}
	if b, ok := v.([]byte); ok {
		return string(b), nil
	}
	return fmt.Sprint(v), nil
}

// ErrStatementTooLarge is wrapped by *StatementTooLargeError.
var ErrStatementTooLarge = errors.New("statement larger than the server accepts")

// StatementTooLargeError refuses, before any SQL, a write whose values
// alone exceed the server's limit on one statement (the dialect's
// StatementLimit, read at Open).
type StatementTooLargeError struct {
	What    string // e.g. "append of 1 event"
	Bytes   int64  // the values' size
	Limit   int64  // the server's setting
	Setting string // e.g. "max_allowed_packet"
}

func (e *StatementTooLargeError) Error() string {
	return fmt.Sprintf("%s: its values are %d bytes, more than the server's %s allows in one statement (%d bytes, less %d for the statement itself); raise %s on the server or store less per event",
		e.What, e.Bytes, e.Setting, e.Limit, statementOverhead, e.Setting)
}

// Unwrap makes errors.Is(err, ErrStatementTooLarge) hold.
func (e *StatementTooLargeError) Unwrap() error { return ErrStatementTooLarge }

// statementOverhead is what the SQL text, the other columns and the
// protocol's framing take of the limit: generous, as a statement refused
// by the server only fails later, untyped.
const statementOverhead = 64 << 10

// readStatementLimit reads the dialect's StatementLimit (0: none).
func (e *Engine) readStatementLimit(ctx context.Context, q Querier) error {
	l := e.Cat.StatementLimit
	if l.Query == "" {
		return nil
	}
	var n int64
	if err := q.QueryRowContext(ctx, l.Query).Scan(&n); err != nil {
		return fmt.Errorf("reading %s: %w", l.Setting, e.Errors.Wrap(err))
	}
	e.maxStatementBytes = n
	return nil
}

// MaxStatementBytes is the server's limit on one statement read at Open
// (the dialect's StatementLimit), or 0 when the dialect declares none.
func (e *Engine) MaxStatementBytes() int64 { return e.maxStatementBytes }

// CheckStatementSize refuses what, whose values take n bytes, when they
// cannot fit in one statement under the server's limit.
func (e *Engine) CheckStatementSize(what string, n int64) error {
	if e.maxStatementBytes <= 0 || n <= e.maxStatementBytes-statementOverhead {
		return nil
	}
	return &StatementTooLargeError{What: what, Bytes: n, Limit: e.maxStatementBytes, Setting: e.Cat.StatementLimit.Setting}
}
