package projection

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// ErrDeclarationChanged is wrapped by DeclarationChangedError.
var ErrDeclarationChanged = errors.New("projection declaration changed")

// DeclarationChangedError reports a projection whose declaration's
// fingerprint differs from the one stored with its consumer: the consumer
// is halted with DECLARATION_CHANGED until an operator rebuilds it
// (Rebuild) or accepts the new declaration (Accept).
type DeclarationChangedError struct {
	Projection string
	// Stored and Declared are the fingerprints: stored with the consumer,
	// and of the declaration opened now.
	Stored, Declared string
	// Parts names the parts that differ (identity, listeners, fields,
	// storage).
	Parts []string
}

func (e *DeclarationChangedError) Error() string {
	return fmt.Sprintf("projection %q: its declaration changed (%s) since its read models were built; its consumer is halted with DECLARATION_CHANGED until it is rebuilt or the change accepted (tidemark projections rebuild|accept %s)",
		e.Projection, strings.Join(e.Parts, ", "), e.Projection)
}

// Unwrap makes errors.Is(err, ErrDeclarationChanged) hold.
func (e *DeclarationChangedError) Unwrap() error { return ErrDeclarationChanged }

// fingerprintParts names the fingerprint's four hashes, in order.
var fingerprintParts = []string{"identity", "listeners", "fields", "storage"}

// Fingerprint is the declaration's fingerprint as
// CONSUMERS.declaration_fingerprint stores it: four hashes, comma
// separated, of its identity and scope, its listeners (event types and
// upstream projections, sorted), its query fields (column, kind, digits,
// unique, in order) and its storage (codec, read-model type name, query
// table).
func (s *Store[S]) Fingerprint() string {
	p := s.p
	var listeners []string
	for t := range p.listeners {
		listeners = append(listeners, "event:"+t)
	}
	for n := range p.upstream {
		listeners = append(listeners, "read-model:"+n)
	}
	sort.Strings(listeners)
	var fields []string
	for _, f := range p.fields {
		fields = append(fields, fmt.Sprintf("%s %s %d %d %v", strings.ToLower(f.decl.Column), f.decl.Kind, f.decl.Precision, f.decl.Scale, f.decl.Unique))
	}
	parts := []string{
		hashOf(p.name, p.scope.String()),
		hashOf(listeners...),
		hashOf(fields...),
		hashOf(reflect.TypeOf(p.codec).String(), p.typeName, strings.ToLower(s.table)),
	}
	return strings.Join(parts, ",")
}

// hashOf is the first 16 hex digits of the SHA-256 of parts, each
// length-prefixed so that no two lists hash alike by concatenation.
func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// splitFingerprint splits a stored fingerprint into its current four and
// the previous four (after ";").
func splitFingerprint(fp string) (current, previous string) {
	current, previous, _ = strings.Cut(fp, ";")
	return current, previous
}

// changedParts names the parts in which two fingerprints differ.
func changedParts(a, b string) []string {
	x, y := strings.Split(a, ","), strings.Split(b, ",")
	var out []string
	for i, name := range fingerprintParts {
		if i >= len(x) || i >= len(y) || x[i] != y[i] {
			out = append(out, name)
		}
	}
	return out
}

// nextFingerprint is what is stored when declared replaces stored: the
// new four, and after ";" the four it replaced (the previous ones kept
// when nothing changed).
func nextFingerprint(stored, declared string) string {
	cur, prev := splitFingerprint(stored)
	if cur != "" && cur != declared {
		prev = cur
	}
	if prev == "" {
		return declared
	}
	return declared + ";" + prev
}
