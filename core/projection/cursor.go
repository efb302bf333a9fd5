package projection

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// Cursor is where a finder's next page starts: after the last read model
// of a page (keyset pagination on the order column and the key). The zero
// Cursor is the first page; String and ParseCursor carry it across calls.
type Cursor struct {
	key   string
	value any // the order column's bind value; nil for NULL or key order
	set   bool
	done  bool
}

// Done reports that no page follows.
func (c Cursor) Done() bool { return c.done }

func (c Cursor) start() bool { return !c.set }

type cursorJSON struct {
	K string `json:"k"`
	V any    `json:"v,omitempty"`
	T string `json:"t,omitempty"` // "i" int64, "b" bool, "s" string, "ts" instant
}

// String encodes the cursor (URL-safe); "" for the first page.
func (c Cursor) String() string {
	if !c.set {
		return ""
	}
	j := cursorJSON{K: c.key}
	switch v := c.value.(type) {
	case int64:
		j.V, j.T = v, "i"
	case bool:
		j.V, j.T = v, "b"
	case string:
		j.V, j.T = v, "s"
	case time.Time:
		j.V, j.T = v.Format(time.RFC3339Nano), "ts"
	}
	b, _ := json.Marshal(j)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ErrBadCursor is returned by ParseCursor for text String did not make.
var ErrBadCursor = errors.New("not a projection cursor")

// ParseCursor decodes a Cursor's String; "" is the first page.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
	}
	var j cursorJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&j); err != nil {
		return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
	}
	c := Cursor{key: j.K, set: true}
	switch j.T {
	case "i":
		n, ok := j.V.(json.Number)
		if !ok {
			return Cursor{}, ErrBadCursor
		}
		v, err := n.Int64()
		c.value = v
		return c, err
	case "b":
		c.value, _ = j.V.(bool)
	case "s":
		c.value, _ = j.V.(string)
	case "ts":
		str, _ := j.V.(string)
		t, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
		}
		c.value = t.UTC()
	}
	return c, nil
}

// order is a finder's order: a query field (nil: the key) and direction.
type order[S any] struct {
	field *field[S]
	desc  bool
}

func (s *Store[S]) order(q Query) (order[S], error) {
	o := order[S]{desc: q.Desc}
	if q.OrderBy != "" {
		f, err := s.fieldOf("", q.OrderBy)
		if err != nil {
			return o, err
		}
		o.field = f
	}
	return o, nil
}

func (o order[S]) dir() string {
	if o.desc {
		return " DESC"
	}
	return " ASC"
}

func (o order[S]) cmp() string {
	if o.desc {
		return "<"
	}
	return ">"
}

// columns are what a page reads: the key, the state and, for an order by a
// field, the field's column (the cursor's value is the column's, which may
// differ from what the state's getter gives: a column added and not yet
// back-filled, a getter changed and accepted, a row written by hand).
func (o order[S]) columns() []string {
	if o.field == nil {
		return []string{"q.read_model_id", "r.payload"}
	}
	return []string{"q.read_model_id", "r.payload", "q." + o.field.decl.Column}
}

// part is one stretch of a finder's order: the read models with a value
// in the order field (by value, then key), or those without one (by key).
// An order by key is one part.
type part[S any] struct {
	o     order[S]
	nulls bool // the models without a value in the order field
}

// parts are the stretches a page starting after c may take rows from.
func (o order[S]) parts(c Cursor) []part[S] {
	switch {
	case o.field == nil:
		return []part[S]{{o: o}}
	case c.set && c.value == nil:
		return []part[S]{{o: o, nulls: true}} // the cursor is already among them
	}
	return []part[S]{{o: o}, {o: o, nulls: true}}
}

// terms order the part's rows: by the field, then by key.
func (p part[S]) terms() []string {
	if p.o.field == nil || p.nulls {
		return []string{"q.read_model_id" + p.o.dir()}
	}
	return []string{"q." + p.o.field.decl.Column + p.o.dir(), "q.read_model_id" + p.o.dir()}
}

// restrict keeps b to the part's rows after c. The bound on the field
// alone (col >= v) is implied by the keyset condition beside it; it is
// there for the planner, which can serve it from the field's index.
func (p part[S]) restrict(b sq.SelectBuilder, c Cursor) (sq.SelectBuilder, error) {
	if p.o.field == nil {
		if c.set {
			b = b.Where("q.read_model_id "+p.o.cmp()+" ?", c.key)
		}
		return b, nil
	}
	col := "q." + p.o.field.decl.Column
	if p.nulls {
		b = b.Where(col + " IS NULL")
		if c.set && c.value == nil {
			b = b.Where("q.read_model_id "+p.o.cmp()+" ?", c.key)
		}
		return b, nil
	}
	b = b.Where(col + " IS NOT NULL")
	if !c.set {
		return b, nil
	}
	return b.Where(col+" "+p.o.cmp()+"= ?", c.value).
		Where("("+col+" "+p.o.cmp()+" ? OR ("+col+" = ? AND q.read_model_id "+p.o.cmp()+" ?))", c.value, c.value, c.key), nil
}

// cursor is the cursor after the row (key, col): col is the order field's
// column as the page read it (nil for an order by key), brought to the
// form a finder binds (cursorValue).
func (o order[S]) cursor(s *Store[S], key string, col any) (Cursor, error) {
	c := Cursor{key: key, set: true}
	if o.field == nil || col == nil {
		return c, nil
	}
	v, err := cursorValue(o.field.decl.Kind, col)
	if err != nil {
		return c, fmt.Errorf("projection %q, column %s of read model %q: %w", s.p.name, o.field.decl.Column, key, err)
	}
	if c.value, err = s.rules.apply(o.field.decl, v); err != nil {
		return c, err
	}
	return c, nil
}

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }
