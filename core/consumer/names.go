package consumer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Column widths of the spec (characters).
const (
	MaxTypeLength   = 32  // CONSUMERS.consumer_type VARCHAR(32)
	MaxNameLength   = 255 // CONSUMERS.consumer_name VARCHAR(255)
	MaxSourceLength = 255 // CONSUMER_CHECKPOINTS.source_name VARCHAR(255)
)

// checkName refuses, before any SQL, a name the columns cannot store or
// that the engine would not tell apart from another: empty, not UTF-8, a
// NUL, too long, or (where the dialect declares KeysIgnoreTrailingSpaces)
// ending in a space. Collations that merge case or accents are caught by
// the database itself at subscribe (NameCollisionError).
func checkName(field, v string, limit int, ignoresTrailingSpaces bool, engineName string) error {
	refuse := func(reason string) error { return &InvalidNameError{Field: field, Value: v, Reason: reason} }
	switch {
	case v == "":
		return refuse("is empty")
	case !utf8.ValidString(v):
		return refuse("is not valid UTF-8")
	case strings.ContainsRune(v, 0):
		return refuse("contains a NUL character")
	}
	if n := utf8.RuneCountInString(v); n > limit {
		return refuse(fmt.Sprintf("is %d characters long, the limit is %d", n, limit))
	}
	if ignoresTrailingSpaces && strings.HasSuffix(v, " ") {
		return refuse(fmt.Sprintf("ends with a space, which %s ignores when it compares names", engineName))
	}
	return nil
}

// checkSourceNames refuses, before any SQL, two sources of one
// subscription whose names are equal ignoring case: an engine comparing
// names ignoring case would keep one checkpoint for both, and the same
// subscription must mean the same on every engine.
func checkSourceNames(sources []SourceRef) error {
	for i, a := range sources {
		for _, b := range sources[:i] {
			if a.Name == b.Name {
				return &InvalidNameError{Field: "source name", Value: a.Name, Reason: "is given twice"}
			}
			if strings.EqualFold(a.Name, b.Name) {
				return &InvalidNameError{Field: "source name", Value: a.Name,
					Reason: fmt.Sprintf("differs from the source %q only in case, which an engine comparing names ignoring case would merge into one checkpoint", b.Name)}
			}
		}
	}
	return nil
}
