package jdbcbridge

import "fmt"

// Error is an error reported by the JDBC driver behind the bridge (or by the bridge itself).
// It carries the SQLSTATE and the vendor error code from java.sql.SQLException.
type Error struct {
	// State is the five-character SQLSTATE ("23505", "HYT00", ...).
	State string
	// Code is the vendor-specific error code (H2: 23505 for duplicate keys; HSQLDB: -104).
	Code int
	// Message is the JDBC driver's message.
	Message string
}

// Error returns the message together with its SQLSTATE and vendor code.
func (e *Error) Error() string {
	return fmt.Sprintf("jdbcbridge: %s (SQLSTATE %s, vendor code %d)", e.Message, e.State, e.Code)
}

// SQLState returns the SQLSTATE of the error.
func (e *Error) SQLState() string { return e.State }

// VendorCode returns the vendor-specific error code.
func (e *Error) VendorCode() int { return e.Code }
