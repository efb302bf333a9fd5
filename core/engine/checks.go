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
