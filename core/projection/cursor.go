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
		f, err := s.fieldOf(q.OrderBy)
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

func (o order[S]) columns() []string { return []string{"q.read_model_id", "r.payload"} }

// terms order by the field with read models without a value last (the
// same on every engine, whatever its NULL ordering), then by key.
func (o order[S]) terms() []string {
	if o.field == nil {
		return []string{"q.read_model_id" + o.dir()}
	}
	col := "q." + o.field.decl.Column
	return []string{"CASE WHEN " + col + " IS NULL THEN 1 ELSE 0 END", col + o.dir(), "q.read_model_id" + o.dir()}
}

// after restricts b to the rows after c in this order.
func (o order[S]) after(b sq.SelectBuilder, c Cursor) (sq.SelectBuilder, error) {
	if o.field == nil {
		return b.Where("q.read_model_id "+o.cmp()+" ?", c.key), nil
	}
	col := "q." + o.field.decl.Column
	if c.value == nil {
		return b.Where(col+" IS NULL AND q.read_model_id "+o.cmp()+" ?", c.key), nil
	}
	return b.Where("("+col+" "+o.cmp()+" ? OR ("+col+" = ? AND q.read_model_id "+o.cmp()+" ?) OR "+col+" IS NULL)",
		c.value, c.value, c.key), nil
}

// cursor is the cursor after item (key, v): the order field's value as the
// read model's state gives it, the value the save wrote to the column.
func (o order[S]) cursor(key string, v *S) Cursor {
	c := Cursor{key: key, set: true}
	if o.field != nil {
		c.value, _ = o.field.conv(o.field.get(v))
	}
	return c
}

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }
