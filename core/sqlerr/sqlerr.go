// Package sqlerr classifies database errors with a dialect's rules, once, at
// the engine's entry.
//
// The core imports no driver, so it reads what a driver error carries by
// shape (see Extract): the SQLSTATE, every vendor code, the violated
// constraint's name and the message. A dialect's ErrorRules map those to a
// dialect.ErrorClass, and Classifier.Wrap returns the driver error wrapped in
// an *Error that satisfies errors.Is(err, ErrDeadlock) (and the other class
// sentinels) while errors.As still reaches the driver's own error type.
//
// # What a driver error should offer
//
// A driver (or a bridge such as jdbcbridge) that wants its errors classified
// without guesswork implements any of:
//
//	SQLState() string        // the five-character SQLSTATE
//	VendorCode() int64       // the engine's own error number (int and int32 are read too)
//	ConstraintName() string  // the violated constraint or unique index
//
// Without them Extract falls back to reflection over the error's exported
// fields: a string (or [5]byte) field named SQLState, State or Code holding a
// five-character SQLSTATE (pgconn Code, lib/pq Code, go-sql-driver/mysql
// SQLState); integer fields, or slices of integers, whose name contains
// "Code", "Number" or "Errno" (go-mssqldb Number, go-sql-driver/mysql
// Number, jdbcbridge Code, a status vector such as Firebird's GDSCodes);
// string fields named ConstraintName or Constraint (pgconn, lib/pq); and the
// zero-argument methods Code(), Number(), SQLErrorNumber() returning an
// integer (modernc sqlite, go-mssqldb). Where no constraint field exists, the
// name is cut out of the message (see constraintFromMessage).
package sqlerr

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
)

// Details is what could be read off a driver error.
type Details struct {
	SQLState string
	// VendorCode is the first vendor code found (HasVendor tells whether
	// there was one); VendorCodes holds every one, in the order found.
	VendorCode  int64
	HasVendor   bool
	VendorCodes []int64
	// Constraint is the violated constraint's or unique index's name, as the
	// engine reports it ("" when it reports none).
	Constraint string
	// Message is the text of the whole error (err.Error()).
	Message string

	constraintFromDriver bool // Constraint came from a driver's field, not the message
}

// hasCode reports whether c is one of the vendor codes.
func (d *Details) hasCode(c int64) bool {
	for _, v := range d.VendorCodes {
		if v == c {
			return true
		}
	}
	return false
}

func (d *Details) addCode(c int64) {
	if d.hasCode(c) {
		return
	}
	if !d.HasVendor {
		d.VendorCode, d.HasVendor = c, true
	}
	d.VendorCodes = append(d.VendorCodes, c)
}

// Extract reads SQLSTATE, vendor codes, constraint name and message from err
// and every error it wraps (Unwrap() error and Unwrap() []error), without
// knowing the driver. An *Error returns the details read when it was made.
func Extract(err error) Details {
	if err == nil {
		return Details{}
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Details
	}
	d := Details{Message: err.Error()}
	driverMsg := ""
	walk(err, func(e error) {
		before := len(d.VendorCodes) + len(d.SQLState)
		fromMethods(e, &d)
		fromFields(e, &d)
		if driverMsg == "" && len(d.VendorCodes)+len(d.SQLState) > before {
			driverMsg = e.Error()
		}
	})
	d.constraintFromDriver = d.Constraint != ""
	if d.Constraint == "" {
		if driverMsg == "" {
			driverMsg = d.Message
		}
		d.Constraint = constraintFromMessage(driverMsg)
	}
	return d
}

// walk calls fn on err and on everything it wraps, depth first. The depth
// is bounded (32) against a cyclic chain.
func walk(err error, fn func(error)) {
	var visit func(e error, depth int)
	visit = func(e error, depth int) {
		if e == nil || depth > 32 {
			return
		}
		fn(e)
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				visit(x, depth+1)
			}
		case interface{ Unwrap() error }:
			visit(u.Unwrap(), depth+1)
		}
	}
	visit(err, 0)
}

// fromMethods reads the documented interfaces and the method shapes of the
// drivers in use.
func fromMethods(e error, d *Details) {
	if s, ok := e.(interface{ SQLState() string }); ok && d.SQLState == "" && isSQLState(s.SQLState()) {
		d.SQLState = s.SQLState()
	}
	if c, ok := e.(interface{ ConstraintName() string }); ok && d.Constraint == "" {
		d.Constraint = c.ConstraintName()
	}
	v := reflect.ValueOf(e)
	for _, name := range []string{"VendorCode", "SQLErrorNumber", "Code", "Number"} {
		m := v.MethodByName(name)
		if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
			continue
		}
		if n, ok := integer(m.Type().Out(0).Kind()); ok && !isNilReceiver(v) {
			d.addCode(n(m.Call(nil)[0]))
		}
	}
}

// isNilReceiver guards method calls on a typed nil pointer.
func isNilReceiver(v reflect.Value) bool {
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// integer returns a reader of an integer kind as int64.
func integer(k reflect.Kind) (func(reflect.Value) int64, bool) {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return reflect.Value.Int, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(v reflect.Value) int64 { return int64(v.Uint()) }, true
	}
	return nil, false
}

// codeField says whether an integer field's name marks it as an error code.
// Names such as Line, Position or Class (go-mssqldb's severity) are not.
func codeField(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "code") || strings.Contains(n, "number") || strings.Contains(n, "errno")
}

func fromFields(e error, d *Details) {
	v := reflect.ValueOf(e)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			fromStringField(sf.Name, f.String(), d)
		case reflect.Array: // go-sql-driver/mysql: SQLState [5]byte
			if sf.Name == "SQLState" && d.SQLState == "" && f.Type().Elem().Kind() == reflect.Uint8 {
				b := make([]byte, f.Len())
				for j := range b {
					b[j] = byte(f.Index(j).Uint())
				}
				if s := strings.TrimRight(string(b), "\x00"); isSQLState(s) {
					d.SQLState = s
				}
			}
		case reflect.Slice: // a status vector: Firebird's GDSCodes []int
			if n, ok := integer(f.Type().Elem().Kind()); ok && codeField(sf.Name) {
				for j := 0; j < f.Len(); j++ {
					d.addCode(n(f.Index(j)))
				}
			}
		default:
			if n, ok := integer(f.Kind()); ok && codeField(sf.Name) {
				d.addCode(n(f))
			}
		}
	}
}

func fromStringField(name, val string, d *Details) {
	switch name {
	case "SQLState", "State", "SQLSTATE", "SqlState", "Code": // lib/pq's and pgconn's Code is the SQLSTATE
		if d.SQLState == "" && isSQLState(val) {
			d.SQLState = val
		}
	case "ConstraintName", "Constraint":
		if d.Constraint == "" {
			d.Constraint = val
		}
	}
}

var sqlStateRE = regexp.MustCompile(`^[0-9A-Z]{5}$`)

// isSQLState reports whether s has the shape of a SQLSTATE: five digits or
// upper-case letters ("23505", "40P01", "HYT00").
func isSQLState(s string) bool { return sqlStateRE.MatchString(s) }
