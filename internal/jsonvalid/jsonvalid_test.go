package jsonvalid

import (
	"encoding/json"
	"strings"
	"testing"
)

// corpus is the equivalence corpus: valid and invalid documents at every
// edge of the grammar encoding/json.Valid draws.
var corpus = []string{
	// Empty and whitespace.
	"", " ", "\t\n\r ", "\v1", "\f1", "1\v", "\u00a01",
	// Literals.
	"true", "false", "null", " null ", "nul", "nulll", "True", "NULL", "t", "fals", "truefalse", "true false",
	// Numbers.
	"0", "-0", "1", "-1", "01", "-01", "00", "1.", ".1", "1.0", "1.05", "-", "--1", "+1", "1e", "1e5", "1E5",
	"1e+5", "1e-5", "1e+", "1.e5", "1.5e", "0e0", "0.0e-0", "1x", "123456789012345678901234567890",
	"1.7976931348623157e309", "-0.0", "0x10", "1_000", "Infinity", "NaN", "1 2", "1,", "[1 2]",
	// Strings.
	`""`, `"a"`, `"`, `"abc`, `"a"b"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u0041"`, `"\u00e9"`,
	`"\uD83D\uDE00"`, `"\uD800"`, `"\uDFFF"`, `"\u004"`, `"\u004g"`, `"\U0041"`, `"\x41"`, `"\a"`, `"\'"`,
	`"\`, `"\u"`, `"\u12"`, "\"tab\there\"", "\"nl\nhere\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"",
	"\"\xff\"", "\"\xc3\xa9\"", "\"\xe2\x82\"", "\xff", "\"a\"\xff", "\"\xed\xa0\x80\"",
	`"é ü 日本 😀"`, `"\u0000"`,
	// Arrays.
	"[]", "[ ]", "[", "]", "[1]", "[1,]", "[,1]", "[1,,2]", "[1,2]", "[[[]]]", "[[]", "[]]", "[1:2]",
	`["a",{"b":[null,true,false,-1.5e3]}]`, "[1]x", "[] []",
	// Objects.
	"{}", "{ }", "{", "}", `{"a":1}`, `{"a":1,}`, `{,"a":1}`, `{"a"}`, `{"a":}`, `{a:1}`, `{'a':1}`,
	`{"a" : 1 , "b" : [ ] }`, `{"a":1 "b":2}`, `{"a":1,"a":2}`, `{1:2}`, `{"a":{"b":{"c":{}}}}`,
	`{"a":[}`, `{"a":1]`, `[{"a":1}]`, `{"":""}`, `{"a":1}}`, `{"a"::1}`, `{"a":1,"b"}`,
	// Mixed whitespace inside.
	"\n{\n\t\"a\" :\r\n [ 1 ,\t2 ] }\n",
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, in := range corpus {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json.Valid says %v", in, got, want)
		}
	}
}

// TestNestingLimit checks the depth limit is encoding/json's, in arrays,
// objects and a mix, on both sides of it.
func TestNestingLimit(t *testing.T) {
	for _, depth := range []int{1, 63, 64, 65, 255, 256, 257, 300, maxDepth - 1, maxDepth, maxDepth + 1, maxDepth + 50} {
		docs := map[string]string{
			"arrays":   strings.Repeat("[", depth) + strings.Repeat("]", depth),
			"objects":  strings.Repeat(`{"k":`, depth-1) + "{}" + strings.Repeat("}", depth-1),
			"mixed":    strings.Repeat(`[{"k":`, depth/2) + "1" + strings.Repeat("}]", depth/2),
			"unclosed": strings.Repeat("[", depth),
		}
		for name, doc := range docs {
			if got, want := Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
				t.Errorf("%s at depth %d: Valid = %v, encoding/json.Valid = %v", name, depth, got, want)
			}
		}
	}
	// The limit is reached (a document a level deeper is refused by both).
	if Valid([]byte(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1))) {
		t.Error("a document nested past encoding/json's limit is valid")
	}
}

// TestObjectAfterDeepArray checks the container kinds are kept per level
// past the in-place words (a closing bracket must match its own opener).
func TestObjectAfterDeepArray(t *testing.T) {
	for _, depth := range []int{255, 256, 257, 400} {
		open := strings.Repeat(`{"k":[`, depth)
		ok := open + "1" + strings.Repeat("]}", depth)
		bad := open + "1" + strings.Repeat("}]", depth)
		for _, doc := range []string{ok, bad} {
			if got, want := Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
				t.Errorf("depth %d (%.20s…): Valid = %v, encoding/json.Valid = %v", depth, doc[len(doc)-20:], got, want)
			}
		}
	}
}

func TestValidDoesNotAllocate(t *testing.T) {
	doc := []byte(`{"amount":120.5,"currency":"EUR","tags":["a","b"],"nested":{"ok":true,"n":null}}`)
	if n := testing.AllocsPerRun(100, func() { Valid(doc) }); n != 0 {
		t.Errorf("Valid allocated %.0f times per call, want 0", n)
	}
}

func FuzzValid(f *testing.F) {
	for _, in := range corpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValid compares encoding/json.Valid and Valid on an event
// payload of the bench's size and on a 100-element array of them.
func BenchmarkValid(b *testing.B) {
	small := `{"amount":125.5,"currency":"EUR","note":"benchmark event payload of a typical size"}`
	docs := map[string][]byte{"small": []byte(small), "array100": []byte("[" + strings.Repeat(small+",", 99) + small + "]")}
	for _, name := range []string{"small", "array100"} {
		doc := docs[name]
		b.Run("stdlib/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for range b.N {
				json.Valid(doc)
			}
		})
		b.Run("jsonvalid/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for range b.N {
				Valid(doc)
			}
		})
	}
}
