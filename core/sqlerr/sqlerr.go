// Package sqlerr classifies database errors with a dialect's rules.
//
// The core imports no driver, so it reads what a driver error carries by
// shape: a SQLState() method or field, a vendor code from Number/Code/
// SQLErrorNumber/VendorCode, and the message. The dialect's ErrorRules then
// map those to an ErrorClass.
package sqlerr

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Details is what could be read off a driver error.
type Details struct {
	SQLState   string
	VendorCode int64
	HasVendor  bool
	Message    string
}

// Extract reads SQLSTATE, vendor code and message from err and the errors it
// wraps, without knowing the driver.
func Extract(err error) Details {
	d := Details{Message: err.Error()}
	for e := err; e != nil; e = errors.Unwrap(e) {
		fromValue(e, &d)
		if d.SQLState != "" && d.HasVendor {
			break
		}
	}
	return d
}

func fromValue(e error, d *Details) {
	if s, ok := e.(interface{ SQLState() string }); ok && d.SQLState == "" {
		d.SQLState = s.SQLState()
	}
	if n, ok := e.(interface{ SQLErrorNumber() int32 }); ok && !d.HasVendor {
		d.VendorCode, d.HasVendor = int64(n.SQLErrorNumber()), true
	}
	if n, ok := e.(interface{ VendorCode() int }); ok && !d.HasVendor {
		d.VendorCode, d.HasVendor = int64(n.VendorCode()), true
	}
	if n, ok := e.(interface{ Code() int }); ok && !d.HasVendor { // modernc sqlite
		d.VendorCode, d.HasVendor = int64(n.Code()), true
	}
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
	for _, name := range []string{"SQLState", "Code", "Number"} {
		f := v.FieldByName(name)
		if !f.IsValid() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			// lib/pq's Code is the SQLSTATE.
			if d.SQLState == "" && len(f.String()) == 5 {
				d.SQLState = f.String()
			}
		case reflect.Array: // go-sql-driver/mysql: SQLState [5]byte
			if d.SQLState == "" && f.Type().Elem().Kind() == reflect.Uint8 {
				b := make([]byte, f.Len())
				for i := range b {
					b[i] = byte(f.Index(i).Uint())
				}
				if s := strings.TrimRight(string(b), "\x00"); s != "" {
					d.SQLState = s
				}
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if !d.HasVendor {
				d.VendorCode, d.HasVendor = f.Int(), true
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if !d.HasVendor {
				d.VendorCode, d.HasVendor = int64(f.Uint()), true
			}
		}
	}
}

// Classifier applies a dialect's rules. Build it once at startup.
type Classifier struct {
	rules []compiledRule
}

type compiledRule struct {
	dialect.ErrorRule
	message    *regexp.Regexp
	constraint *regexp.Regexp
}

// NewClassifier compiles the rules; an invalid pattern is an error naming it.
func NewClassifier(rules []dialect.ErrorRule) (*Classifier, error) {
	c := &Classifier{}
	for _, r := range rules {
		cr := compiledRule{ErrorRule: r}
		var err error
		if r.MessagePattern != "" {
			if cr.message, err = regexp.Compile(r.MessagePattern); err != nil {
				return nil, fmt.Errorf("error rule %s: message pattern %q: %w", r.Class, r.MessagePattern, err)
			}
		}
		if r.ConstraintPattern != "" {
			if cr.constraint, err = regexp.Compile(r.ConstraintPattern); err != nil {
				return nil, fmt.Errorf("error rule %s: constraint pattern %q: %w", r.Class, r.ConstraintPattern, err)
			}
		}
		c.rules = append(c.rules, cr)
	}
	return c, nil
}

// Classify returns the class of err, or "" when no rule matches.
func (c *Classifier) Classify(err error) dialect.ErrorClass {
	if err == nil || c == nil {
		return ""
	}
	d := Extract(err)
	for _, r := range c.rules {
		if r.SQLState != "" && !matchState(r.SQLState, d.SQLState) {
			continue
		}
		if r.VendorCode != 0 && (!d.HasVendor || r.VendorCode != d.VendorCode) {
			continue
		}
		if r.message != nil && !r.message.MatchString(d.Message) {
			continue
		}
		if r.constraint != nil && !r.constraint.MatchString(d.Message) {
			continue
		}
		return r.Class
	}
	return ""
}

// Is reports whether err is of class.
func (c *Classifier) Is(err error, class dialect.ErrorClass) bool {
	return c.Classify(err) == class
}

func matchState(rule, got string) bool {
	if strings.HasSuffix(rule, "*") {
		return strings.HasPrefix(got, strings.TrimSuffix(rule, "*"))
	}
	return rule == got
}
