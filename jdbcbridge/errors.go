package jdbcbridge

import (
	"errors"
	"fmt"
)

// Error is an error reported by the JDBC driver behind the bridge (or by the bridge itself).
// It carries the SQLSTATE and the vendor error code from java.sql.SQLException.
//
// The bridge's own refusals match these sentinels with errors.Is: ErrInvalidText (22021),
// ErrRequestTooLarge (54000) and ErrOutOfMemory (HY001).
type Error struct {
	// State is the five-character SQLSTATE ("23505", "HYT00", ...).
	State string
	// Code is the vendor-specific error code (H2: 23505 for duplicate keys; HSQLDB: -104).
	Code int
	// Message is the JDBC driver's message.
	Message string
}

// Sentinels for the bridge's own refusals; an *Error with the matching SQLSTATE Is each.
var (
	// ErrInvalidText: text that is not valid UTF-8 was sent (a string parameter or SQL text),
	// or text the database returned has no UTF-8 form (an unpaired surrogate). The bridge
	// refuses it; it never replaces it with U+FFFD. SQLSTATE 22021.
	ErrInvalidText = errors.New("jdbcbridge: text is not valid UTF-8 (SQLSTATE 22021)")
	// ErrRequestTooLarge: a request or a response frame is over the bridge's per-request
	// limit (StartOptions.MaxRequestBytes). Nothing ran; the connection stays usable.
	// SQLSTATE 54000.
	ErrRequestTooLarge = errors.New("jdbcbridge: request over the bridge's per-request limit (SQLSTATE 54000)")
	// ErrOutOfMemory: the bridge's JVM ran out of memory while running the request; the
	// session's transaction was rolled back and the server keeps serving. SQLSTATE HY001.
	ErrOutOfMemory = errors.New("jdbcbridge: the bridge ran out of memory (SQLSTATE HY001)")
)

// Error returns the message together with its SQLSTATE and vendor code.
func (e *Error) Error() string {
	return fmt.Sprintf("jdbcbridge: %s (SQLSTATE %s, vendor code %d)", e.Message, e.State, e.Code)
}

// Is reports whether target is the sentinel for e's SQLSTATE.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalidText:
		return e.State == "22021"
	case ErrRequestTooLarge:
		return e.State == "54000"
	case ErrOutOfMemory:
		return e.State == "HY001"
	}
	return false
}

// SQLState returns the SQLSTATE of the error.
func (e *Error) SQLState() string { return e.State }

// VendorCode returns the vendor-specific error code.
func (e *Error) VendorCode() int { return e.Code }
