package projection

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/schema"
)

type iban struct{ v string }

func TestNativeValues(t *testing.T) {
	dec := schema.QueryField{Column: "c", Kind: Decimal, Precision: 5, Scale: 2}
	ts := time.Date(2026, 1, 2, 23, 4, 5, 123456789, time.FixedZone("x", 3600))
	s := "x"
	cases := []struct {
		d    schema.QueryField
		in   any
		want any
		bad  bool
	}{
		{dec, "12.345", "12.35", false},
		{dec, "-999.994", "-999.99", false},
		{dec, "1000", nil, true},
		{dec, int64(7), "7.00", false},
		{dec, big.NewRat(1, 3), "0.33", false},
		{dec, "abc", nil, true},
		{schema.QueryField{Column: "c", Kind: Text}, &s, "x", false},
		{schema.QueryField{Column: "c", Kind: Text}, (*string)(nil), nil, false},
		{schema.QueryField{Column: "c", Kind: Integer}, uint64(1) << 63, nil, true},
		{schema.QueryField{Column: "c", Kind: Integer}, int8(-3), int64(-3), false},
		{schema.QueryField{Column: "c", Kind: Date}, ts, "2026-01-02", false},
		{schema.QueryField{Column: "c", Kind: Time}, ts, "22:04:05.123456", false},
		{schema.QueryField{Column: "c", Kind: Instant}, ts, time.Date(2026, 1, 2, 22, 4, 5, 123456000, time.UTC), false},
		{schema.QueryField{Column: "c", Kind: Boolean}, true, true, false},
	}
	for _, c := range cases {
		got, err := nativeOf(c.d)(c.in)
		var ve *ValueError
		if c.bad != errors.As(err, &ve) {
			t.Errorf("%s %v: error %v, want error %v", c.d.Kind, c.in, err, c.bad)
			continue
		}
		if !c.bad && got != c.want {
			t.Errorf("%s %v = %#v, want %#v", c.d.Kind, c.in, got, c.want)
		}
	}
}

func TestResolveNeedsConverter(t *testing.T) {
	type S struct{ IBAN iban }
	p := New[S]("p", nil)
	OnType(p, "E", func(Event[struct{}], *S) error { return nil })
	Field(p, "iban", Text, func(s *S) iban { return s.IBAN })
	if err := p.Check(); !errors.Is(err, ErrInvalidDeclaration) {
		t.Fatalf("a field type without converter: %v, want ErrInvalidDeclaration", err)
	}
	convs := NewConverters()
	Convert(convs, func(i iban) string { return i.v })
	p = New[S]("p", nil, WithConverters(convs))
	OnType(p, "E", func(Event[struct{}], *S) error { return nil })
	Field(p, "iban", Text, func(s *S) iban { return s.IBAN })
	if err := p.Check(); err != nil {
		t.Fatalf("with a converter: %v", err)
	}
	if v, err := p.fields[0].conv(iban{"DE1"}); err != nil || v != "DE1" {
		t.Errorf("converted %v, %v", v, err)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	for _, v := range []any{nil, int64(-5), true, "a\"b", at} {
		c := Cursor{key: "k/1", value: v, set: true}
		got, err := ParseCursor(c.String())
		if err != nil || got.key != c.key || got.value != c.value || !got.set {
			t.Errorf("%v: round trip %+v, %v", v, got, err)
		}
	}
	if _, err := ParseCursor("!!"); !errors.Is(err, ErrBadCursor) {
		t.Errorf("garbage cursor: %v", err)
	}
	if c, err := ParseCursor(""); err != nil || !c.start() {
		t.Errorf("empty cursor is the first page: %+v, %v", c, err)
	}
}

func TestFieldBindNames(t *testing.T) {
	for i, want := range map[int]string{0: "field_a", 25: "field_z", 26: "field_aa", 27: "field_ab", 52: "field_ba"} {
		if got := fieldBind(i); got != want {
			t.Errorf("fieldBind(%d) = %s, want %s", i, got, want)
		}
	}
}
