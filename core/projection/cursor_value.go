package projection

import (
	"fmt"
	"strconv"
	"time"
)

// cursorValue is a column value as a driver scanned it (int64, float64,
// bool, string, []byte, time.Time or a driver's decimal) in the form the
// finder binds for the kind (nativeOf's): a string for TEXT and DECIMAL
// (the engine's own digits), int64, bool, DATE as 2006-01-02, TIME as
// 15:04:05.000000 (or the engine's text), an instant as a UTC time.
func cursorValue(k Kind, raw any) (any, error) {
	if b, ok := raw.([]byte); ok {
		raw = string(b)
	}
	switch k {
	case Text, Decimal:
		return textValue(raw), nil
	case Integer:
		return integerValue(raw)
	case Boolean:
		return booleanValue(raw)
	case Date:
		if t, ok := raw.(time.Time); ok {
			return t.Format(time.DateOnly), nil // the driver's wall clock: the stored date
		}
		if s, ok := raw.(string); ok && len(s) >= len(time.DateOnly) {
			return s[:len(time.DateOnly)], nil
		}
	case Time:
		if t, ok := raw.(time.Time); ok {
			return t.Format("15:04:05.000000"), nil
		}
		if s, ok := raw.(string); ok {
			return s, nil
		}
	case Instant:
		if t, ok := raw.(time.Time); ok {
			return t.UTC(), nil
		}
		if s, ok := raw.(string); ok {
			return s, nil
		}
	}
	return nil, fmt.Errorf("a %s column read as %T", k, raw)
}

func textValue(raw any) string {
	switch v := raw.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64) // SQLite's REAL: its shortest exact text
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(raw)
}

func integerValue(raw any) (any, error) {
	switch v := raw.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	case float64:
		return int64(v), nil
	}
	return nil, fmt.Errorf("an integer column read as %T", raw)
}

func booleanValue(raw any) (any, error) {
	switch v := raw.(type) {
	case bool:
		return v, nil
	case int64:
		return v != 0, nil
	case string:
		return strconv.ParseBool(v)
	}
	return nil, fmt.Errorf("a boolean column read as %T", raw)
}
