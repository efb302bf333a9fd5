package projection

import (
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// Kind is a query field's column kind.
type Kind = dialect.QueryFieldKind

// Query-field kinds.
const (
	Text    = dialect.KindText    // VARCHAR(255): strings, integers, booleans, fmt.Stringer
	Integer = dialect.KindInteger // BIGINT: any Go integer
	Decimal = dialect.KindDecimal // DECIMAL(p,s): decimal strings, integers, *big.Int, *big.Rat
	Date    = dialect.KindDate    // DATE: time.Time (its date in UTC)
	Time    = dialect.KindTime    // TIME(6): time.Time (its time of day in UTC, microseconds)
	Instant = dialect.KindInstant // TIMESTAMP(6) in UTC: time.Time, microseconds
	Boolean = dialect.KindBoolean // BOOLEAN: bool
)

// FieldOption sets a query field's optional attributes.
type FieldOption func(*schema.QueryField)

// Unique gives the column a unique index (read models without a value do
// not count against it) and allows FindUnique on it. UniqueField declares
// a unique field whose handle FindBy takes.
func Unique() FieldOption { return func(f *schema.QueryField) { f.Unique = true } }

// Digits sets a Decimal column's precision and scale (default 38, 10).
func Digits(precision, scale int) FieldOption {
	return func(f *schema.QueryField) { f.Precision, f.Scale = precision, scale }
}

// field is a declared query field of read model S.
type field[S any] struct {
	decl   schema.QueryField
	get    func(*S) any
	goType reflect.Type
	conv   func(any) (any, error) // resolved at Check
}

// Field declares a query column of the read model: get returns the value
// copied into column on every save (a nil pointer stores NULL). V must be a
// Go type the kind holds (see the Kind constants), a pointer to one, or a
// type with a converter (Convert) to one; otherwise the store refuses to
// open. It returns the field's typed handle, whose conditions take values
// of type V (the any-typed Eq(column, v), … work as well).
func Field[S, V any](p *Projection[S], column string, kind Kind, get func(*S) V, opts ...FieldOption) Column[S, V] {
	h := Column[S, V]{projection: p.name, column: column}
	d := schema.QueryField{Column: column, Kind: kind}
	if kind == Decimal {
		d.Precision, d.Scale = 38, 10
	}
	for _, o := range opts {
		o(&d)
	}
	for _, f := range p.fields {
		if strings.EqualFold(f.decl.Column, column) {
			p.fail("two query fields on column %q", column)
			return h
		}
	}
	p.fields = append(p.fields, field[S]{decl: d, goType: reflect.TypeFor[V](),
		get: func(s *S) any { return get(s) }})
	return h
}

// resolve finds how the field's Go type reaches its column.
func (f *field[S]) resolve(c *Converters) error {
	t := f.goType
	if f.decl.Kind == Decimal && (f.decl.Precision < 1 || f.decl.Precision > 38 || f.decl.Scale < 0 || f.decl.Scale > f.decl.Precision) {
		return fmt.Errorf("query field %s: decimal(%d,%d) is out of range (1 ≤ precision ≤ 38, 0 ≤ scale ≤ precision)", f.decl.Column, f.decl.Precision, f.decl.Scale)
	}
	native := nativeOf(f.decl)
	if t.Kind() == reflect.Pointer && accepts(f.decl.Kind, t.Elem()) {
		f.conv = func(v any) (any, error) {
			rv := reflect.ValueOf(v)
			if rv.IsNil() {
				return nil, nil
			}
			return native(rv.Elem().Interface())
		}
		return nil
	}
	if accepts(f.decl.Kind, t) {
		f.conv = native
		return nil
	}
	if cv, ok := c.m[t]; ok {
		if !holds(f.decl.Kind, cv.out) {
			return fmt.Errorf("query field %s: the converter of %s returns %s, which a %s column cannot hold", f.decl.Column, t, cv.out, f.decl.Kind)
		}
		f.conv = func(v any) (any, error) { return native(cv.fn(v)) }
		return nil
	}
	return fmt.Errorf("query field %s: a %s column cannot hold %s; register a converter (projection.Convert) to a type it holds", f.decl.Column, f.decl.Kind, t)
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	bigIntType = reflect.TypeFor[*big.Int]()
	bigRatType = reflect.TypeFor[*big.Rat]()
	stringer   = reflect.TypeFor[fmt.Stringer]()
)

func isInteger(k reflect.Kind) bool {
	return (k >= reflect.Int && k <= reflect.Int64) || (k >= reflect.Uint && k <= reflect.Uint64)
}

// accepts says whether a value of type t reaches a column of kind k
// without a converter.
func accepts(k Kind, t reflect.Type) bool {
	switch k {
	case Text:
		return t.Kind() == reflect.String || isInteger(t.Kind()) || t.Kind() == reflect.Bool || t.Implements(stringer)
	case Integer:
		return isInteger(t.Kind())
	case Decimal:
		return t.Kind() == reflect.String || isInteger(t.Kind()) || t == bigIntType || t == bigRatType
	case Date, Time, Instant:
		return t == timeType
	case Boolean:
		return t.Kind() == reflect.Bool
	}
	return false
}

// ValueError reports a query-field value its column cannot hold; the apply
// fails (no retry can change it).
type ValueError struct {
	Column string
	Value  any
	Reason string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("query column %s: value %v: %s", e.Column, e.Value, e.Reason)
}

// nativeOf returns the conversion of a value to what the column binds:
// string (TEXT, DECIMAL in canonical form, DATE as 2006-01-02, TIME as
// 15:04:05.000000), int64, bool, or a time.Time in UTC cut to microseconds.
func nativeOf(d schema.QueryField) func(any) (any, error) {
	bad := func(v any, reason string) error { return &ValueError{Column: d.Column, Value: v, Reason: reason} }
	return func(v any) (any, error) {
		if v == nil {
			return nil, nil
		}
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Pointer && rv.Type() != bigIntType && rv.Type() != bigRatType {
			if rv.IsNil() {
				return nil, nil
			}
			rv = rv.Elem()
			v = rv.Interface()
		}
		switch d.Kind {
		case Text:
			s := textOf(rv)
			if !utf8.ValidString(s) {
				return nil, bad(v, "not valid UTF-8")
			}
			if n := utf8.RuneCountInString(s); n > 255 {
				return nil, bad(v, fmt.Sprintf("%d characters, the column holds 255", n))
			}
			return s, nil
		case Integer:
			if !isInteger(rv.Kind()) {
				return nil, bad(v, "not an integer")
			}
			if rv.CanUint() {
				if rv.Uint() > 1<<63-1 {
					return nil, bad(v, "beyond BIGINT")
				}
				return int64(rv.Uint()), nil
			}
			return rv.Int(), nil
		case Decimal:
			return decimalOf(d, v, bad)
		case Date, Time, Instant:
			t, ok := v.(time.Time)
			if !ok {
				return nil, bad(v, "not a time.Time")
			}
			return TemporalValue(d.Kind, t), nil
		case Boolean:
			if rv.Kind() != reflect.Bool {
				return nil, bad(v, "not a bool")
			}
			return rv.Bool(), nil
		}
		return nil, bad(v, "unknown kind "+string(d.Kind))
	}
}

// TemporalValue is t as a column of kind k binds it: a DATE as
// 2006-01-02 and a TIME as 15:04:05.000000 (both of t in UTC), an instant
// as t in UTC cut to microseconds. Finders convert their values the same way.
func TemporalValue(k Kind, t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	switch k {
	case Date:
		return t.Format(time.DateOnly)
	case Time:
		return t.Format("15:04:05.000000")
	}
	return t
}

// columnRules are the engine's facts a bound value follows: a TIME or
// instant cut to the fractional-second digits the engine keeps, the way
// event times are cut (an engine that rounds, or keeps fewer digits in TIME
// than in TIMESTAMP, then stores exactly what was bound, and a finder's
// value matches it); a text checked in the unit the engine's VARCHAR counts.
type columnRules struct {
	time, instant int
	facts         dialect.EngineFacts
}

func columnRulesOf(cat *dialect.Catalogue) columnRules {
	return columnRules{time: schema.RequiredTimeDigits(cat), instant: schema.RequiredInstantDigits(cat), facts: cat.Facts}
}

// apply brings v, a value nativeOf returned for column d, to what the
// engine's column holds, or refuses it.
func (c columnRules) apply(d schema.QueryField, v any) (any, error) {
	switch d.Kind {
	case Text:
		if s, ok := v.(string); ok {
			if n, fits := c.facts.TextFits(s, 255); !fits {
				return nil, &ValueError{Column: d.Column, Value: v, Reason: fmt.Sprintf("%d %s, the column holds 255", n, c.facts.TextUnit.Name())}
			}
		}
	case Time:
		// nativeOf's form: 15:04:05.000000.
		if s, ok := v.(string); ok && len(s) == len("15:04:05.000000") {
			if c.time == 0 {
				return s[:len("15:04:05")], nil
			}
			return s[:len("15:04:05.")+c.time], nil
		}
	case Instant:
		if t, ok := v.(time.Time); ok {
			d := time.Duration(1)
			for i := c.instant; i < 9; i++ {
				d *= 10
			}
			return t.Truncate(d), nil
		}
	}
	return v, nil
}

func textOf(rv reflect.Value) string {
	if s, ok := rv.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	switch {
	case rv.Kind() == reflect.String:
		return rv.String()
	case rv.Kind() == reflect.Bool:
		return fmt.Sprint(rv.Bool())
	case rv.CanInt():
		return fmt.Sprint(rv.Int())
	case rv.CanUint():
		return fmt.Sprint(rv.Uint())
	}
	return fmt.Sprint(rv.Interface())
}

// decimalOf is v as a decimal string rounded to the column's scale, refused
// when its integer digits exceed precision-scale.
func decimalOf(d schema.QueryField, v any, bad func(any, string) error) (any, error) {
	r := new(big.Rat)
	switch x := v.(type) {
	case *big.Rat:
		if x == nil {
			return nil, nil
		}
		r.Set(x)
	case *big.Int:
		if x == nil {
			return nil, nil
		}
		r.SetInt(x)
	default:
		rv := reflect.ValueOf(v)
		switch {
		case rv.Kind() == reflect.String:
			if _, ok := r.SetString(strings.TrimSpace(rv.String())); !ok {
				return nil, bad(v, "not a decimal number")
			}
		case rv.CanInt():
			r.SetInt64(rv.Int())
		case rv.CanUint():
			r.SetInt(new(big.Int).SetUint64(rv.Uint()))
		default:
			return nil, bad(v, "not a decimal number")
		}
	}
	s := r.FloatString(d.Scale)
	digits := strings.TrimLeft(strings.SplitN(strings.TrimPrefix(s, "-"), ".", 2)[0], "0")
	if len(digits) > d.Precision-d.Scale {
		return nil, bad(v, fmt.Sprintf("%d integer digits, DECIMAL(%d,%d) holds %d", len(digits), d.Precision, d.Scale, d.Precision-d.Scale))
	}
	return s, nil
}
