package sqlerr

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Classifier applies a dialect's rules. Build it once at startup.
type Classifier struct {
	rules []compiledRule
}

type compiledRule struct {
	dialect.ErrorRule
	message    *regexp.Regexp
	constraint *regexp.Regexp
	nameShape  *regexp.Regexp // ConstraintFromMessage
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
		if r.ConstraintFromMessage != "" {
			if cr.nameShape, err = regexp.Compile(r.ConstraintFromMessage); err != nil {
				return nil, fmt.Errorf("error rule %s: constraint-from-message pattern %q: %w", r.Class, r.ConstraintFromMessage, err)
			}
			if cr.nameShape.NumSubexp() != 1 {
				return nil, fmt.Errorf("error rule %s: constraint-from-message pattern %q has %d groups, want exactly one (the name)", r.Class, r.ConstraintFromMessage, cr.nameShape.NumSubexp())
			}
		}
		c.rules = append(c.rules, cr)
	}
	return c, nil
}

// Classify returns the class of err, or "" when no rule matches. An error
// already wrapped by Wrap answers with its class, without reading it again.
func (c *Classifier) Classify(err error) dialect.ErrorClass {
	if err == nil {
		return ""
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Class
	}
	if c == nil || passThrough(err) {
		return ""
	}
	class, _ := c.classify(err)
	return class
}

func (c *Classifier) classify(err error) (dialect.ErrorClass, Details) {
	d := Extract(err)
	for _, r := range c.rules {
		if r.SQLState != "" && !matchState(r.SQLState, d.SQLState) {
			continue
		}
		if r.VendorCode != 0 && !d.hasCode(r.VendorCode) {
			continue
		}
		if r.message != nil && !r.message.MatchString(d.Message) {
			continue
		}
		if r.constraint != nil {
			if name := r.constraintName(d); name == "" || !r.constraint.MatchString(name) {
				continue
			}
		}
		return r.Class, d
	}
	return "", d
}

// constraintName is the name the rule's ConstraintPattern tests: the
// driver's field, else the rule's own shape over the message, else the
// built-in shapes' guess.
func (r *compiledRule) constraintName(d Details) string {
	if r.nameShape == nil || d.constraintFromDriver {
		return d.Constraint
	}
	if m := r.nameShape.FindStringSubmatch(d.Message); m != nil {
		return strings.TrimSpace(m[1])
	}
	return d.Constraint
}

// Is reports whether err is of class.
func (c *Classifier) Is(err error, class dialect.ErrorClass) bool {
	return c.Classify(err) == class
}

// Wrap returns err wrapped in an *Error when a rule classifies it, and err
// itself otherwise: nil, an error already wrapped (classifying twice is
// one errors.As, never a second wrapper), a context error (the caller's own
// cancel or deadline stays errors.Is(err, context.Canceled) and unchanged),
// sql.ErrNoRows and sql.ErrTxDone, and any error no rule matches.
func (c *Classifier) Wrap(err error) error {
	if err == nil || c == nil || passThrough(err) {
		return err
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	class, d := c.classify(err)
	if class == "" {
		return err
	}
	return &Error{Class: class, Details: d, Err: err}
}

// passThrough is what is never classified: database/sql's own conditions and
// the caller's context.
func passThrough(err error) bool {
	return err == sql.ErrNoRows || err == sql.ErrTxDone ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func matchState(rule, got string) bool {
	if strings.HasSuffix(rule, "*") {
		return strings.HasPrefix(got, strings.TrimSuffix(rule, "*"))
	}
	return rule == got
}
