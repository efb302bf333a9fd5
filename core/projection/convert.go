package projection

import (
	"reflect"
	"sync"
)

// Converters reduce values of an application's types to a kind's native
// Go type (a Money to its decimal string, an IBAN to a string).
type Converters struct {
	mu   sync.Mutex
	m    map[reflect.Type]converter
	dups []reflect.Type // types registered twice: refused at Check
}

// converter is a registered conversion and the Go type it returns.
type converter struct {
	fn  func(any) any
	out reflect.Type
}

// NewConverters returns an empty set.
func NewConverters() *Converters { return &Converters{m: map[reflect.Type]converter{}} }

// Convert registers fn for values of type V; at most one per type. A second
// converter for V is refused, and a converter whose N the field's kind
// cannot hold too, by the Open (or Check) of a projection using the set,
// with a *DeclarationError before any SQL.
func Convert[V, N any](c *Converters, fn func(V) N) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := reflect.TypeFor[V]()
	if _, ok := c.m[t]; ok {
		c.dups = append(c.dups, t)
		return
	}
	c.m[t] = converter{fn: func(v any) any { return fn(v.(V)) }, out: reflect.TypeFor[N]()}
}

// duplicates are the types registered twice.
func (c *Converters) duplicates() []reflect.Type {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]reflect.Type(nil), c.dups...)
}

// holds says whether a converter's result type reaches a column of kind k:
// a type it accepts, a pointer to one, or an interface (its dynamic value
// is checked at each write).
func holds(k Kind, out reflect.Type) bool {
	switch {
	case out.Kind() == reflect.Interface:
		return true
	case accepts(k, out):
		return true
	case out.Kind() == reflect.Pointer && out != bigIntType && out != bigRatType:
		return accepts(k, out.Elem())
	}
	return false
}
