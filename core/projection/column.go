package projection

import (
	"context"
	"fmt"
	"strings"
)

// Column is the typed handle of a query field that Field declares: the
// field's column on projection of read model S, whose values are of Go type
// V (the type its getter returns). Its conditions take values of type V
// only, so a condition's column and value type are checked by the
// compiler; they are converted as the any-typed conditions (Eq, In, …) are,
// exactly as the field's values are written. A Store of another projection
// refuses its conditions with a *ForeignColumnError. The zero Column names
// no field: a store refuses it with ErrUnknownColumn.
type Column[S, V any] struct {
	projection string
	column     string
}

// UniqueColumn is the handle of a unique query field, declared with
// UniqueField: a Column that FindBy accepts. Its conditions are a
// Column's.
type UniqueColumn[S, V any] struct {
	Column[S, V]
}

// UniqueField declares a unique query field (Field with Unique) and
// returns its handle, which FindBy takes: that a lookup is on a unique
// field is then checked by the compiler.
func UniqueField[S, V any](p *Projection[S], column string, kind Kind, get func(*S) V, opts ...FieldOption) UniqueColumn[S, V] {
	return UniqueColumn[S, V]{Field(p, column, kind, get, append(opts, Unique())...)}
}

// Name is the field's column, as an any-typed condition or Query.OrderBy
// names it.
func (c Column[S, V]) Name() string { return c.column }

// Projection is the name of the projection that declared the field.
func (c Column[S, V]) Projection() string { return c.projection }

// String is projection.column.
func (c Column[S, V]) String() string { return c.projection + "." + c.column }

func (c Column[S, V]) cond(op string, vs ...V) Cond {
	values := make([]any, len(vs))
	for i, v := range vs {
		values[i] = v
	}
	return Cond{projection: c.projection, column: c.column, op: op, values: values}
}

// Eq matches read models whose column equals v (converted as the field's
// values are: a time cut to microseconds, a decimal rounded to its scale).
// A nil pointer is refused with a *ValueError: use IsNull.
func (c Column[S, V]) Eq(v V) Cond { return c.cond("=", v) }

// Ne matches the column not equal to v (NULL matches neither Eq nor Ne).
func (c Column[S, V]) Ne(v V) Cond { return c.cond("<>", v) }

// Lt matches column < v, in the column's order.
func (c Column[S, V]) Lt(v V) Cond { return c.cond("<", v) }

// Le matches column <= v.
func (c Column[S, V]) Le(v V) Cond { return c.cond("<=", v) }

// Gt matches column > v.
func (c Column[S, V]) Gt(v V) Cond { return c.cond(">", v) }

// Ge matches column >= v.
func (c Column[S, V]) Ge(v V) Cond { return c.cond(">=", v) }

// In matches the column equal to one of vs (none matches nothing).
func (c Column[S, V]) In(vs ...V) Cond { return c.cond("in", vs...) }

// IsNull matches read models without a value in the column.
func (c Column[S, V]) IsNull() Cond { return c.cond("null") }

// NotNull matches read models with a value in the column.
func (c Column[S, V]) NotNull() Cond { return c.cond("notnull") }

// ErrForeignColumn is wrapped by a *ForeignColumnError; it wraps
// ErrUnknownColumn (the store declares no such field of its own).
var ErrForeignColumn = fmt.Errorf("a query field of another projection: %w", ErrUnknownColumn)

// ForeignColumnError reports a typed handle (Column, UniqueColumn) of one
// projection's field used on the store of another: refused, not run on a
// column of the same name. errors.Is(err, ErrForeignColumn) and
// errors.Is(err, ErrUnknownColumn) hold.
type ForeignColumnError struct {
	// Store is the projection whose store was asked.
	Store string
	// Projection and Column are the handle's.
	Projection string
	Column     string
}

func (e *ForeignColumnError) Error() string {
	return fmt.Sprintf("projection %q: column %s is projection %q's query field, not this projection's", e.Store, e.Column, e.Projection)
}

// Unwrap returns ErrForeignColumn.
func (e *ForeignColumnError) Unwrap() error { return ErrForeignColumn }

// FindBy returns the read model whose unique field c equals v (converted
// as Eq converts it); false when there is none. A handle of another
// projection is refused with a *ForeignColumnError.
func FindBy[S, V any](ctx context.Context, st *Store[S], c UniqueColumn[S, V], v V) (Item[S], bool, error) {
	f, err := st.fieldOf(c.projection, c.column)
	if err != nil {
		return Item[S]{}, false, err
	}
	return st.findUnique(ctx, f, v)
}

// fieldOf is the store's query field named column, for a condition or
// handle of projection owner ("" for the any-typed conditions, which
// name a column only).
func (s *Store[S]) fieldOf(owner, column string) (*field[S], error) {
	if owner != "" && owner != s.p.name {
		return nil, &ForeignColumnError{Store: s.p.name, Projection: owner, Column: column}
	}
	for i := range s.p.fields {
		if strings.EqualFold(s.p.fields[i].decl.Column, column) {
			return &s.p.fields[i], nil
		}
	}
	return nil, fmt.Errorf("projection %q, column %q: %w", s.p.name, column, ErrUnknownColumn)
}
