// Package jsonvalid reports whether bytes are one JSON document, with the
// same answer as encoding/json.Valid for every input, in one pass without
// allocating (below 256 levels of nesting).
//
// encoding/json.Valid runs its scanner's state machine: an indirect call
// per input byte. This loop reads strings and numbers in tight loops
// instead; on event payloads it is about 3 times faster (BenchmarkValid;
// docs/performance.md), which matters because the event store validates
// every payload and metadata document before any SQL.
package jsonvalid

// maxDepth is encoding/json's nesting limit (its scanner's
// maxNestingDepth): a document nested deeper is not valid there, so it is
// not valid here either.
const maxDepth = 10000

// Valid reports whether b is exactly one JSON value with optional
// surrounding whitespace, as encoding/json.Valid does: the same grammar
// (RFC 8259), the same four whitespace bytes, the same nesting limit, and,
// like it, no check of the UTF-8 inside strings (bytes 0x80 and up are
// taken as they are; outside strings they are refused).
func Valid(b []byte) bool {
	var st stack
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{':
			if !st.push(true) {
				return false
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == '}' {
				st.pop()
				i++
				break
			}
			if i = key(b, i); i < 0 {
				return false
			}
			continue
		case c == '[':
			if !st.push(false) {
				return false
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				st.pop()
				i++
				break
			}
			continue
		case c == '"':
			if i = str(b, i+1); i < 0 {
				return false
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if i = number(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// A value ended before i: close containers until one goes on.
		for {
			i = skipSpace(b, i)
			if st.depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			c := b[i]
			if c == ',' {
				i = skipSpace(b, i+1)
				if st.inObject() {
					if i = key(b, i); i < 0 {
						return false
					}
				}
				break
			}
			if (c == '}' && st.inObject()) || (c == ']' && !st.inObject()) {
				st.pop()
				i++
				continue
			}
			return false
		}
	}
}

// key reads an object key and its colon at i, returning where the value
// starts (after whitespace), or -1.
func key(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = str(b, i+1); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// str reads the rest of a string whose opening quote is before i and
// returns the offset after the closing quote, or -1.
func str(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		}
		// A backslash.
		i++
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+4 >= len(b) || !hex[b[i+1]] || !hex[b[i+2]] || !hex[b[i+3]] || !hex[b[i+4]] {
				return -1
			}
			i += 5
		default:
			return -1
		}
	}
	return -1
}

// number reads a number starting at i and returns the offset after it, or
// -1. What follows is the caller's to judge ("01" ends after "0", and the
// "1" is then refused as the next token).
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// stack is the kinds of the open containers, one bit a level (1: object):
// the first 256 levels in place, deeper ones in a slice allocated then.
type stack struct {
	depth int
	low   [4]uint64
	high  []uint64
}

func (s *stack) push(object bool) bool {
	if s.depth >= maxDepth {
		return false
	}
	w, bit := s.depth/64, uint64(1)<<(s.depth%64)
	s.depth++
	var word *uint64
	if w < len(s.low) {
		word = &s.low[w]
	} else {
		for w-len(s.low) >= len(s.high) {
			s.high = append(s.high, 0)
		}
		word = &s.high[w-len(s.low)]
	}
	if object {
		*word |= bit
	} else {
		*word &^= bit
	}
	return true
}

func (s *stack) pop() { s.depth-- }

func (s *stack) inObject() bool {
	d := s.depth - 1
	w, bit := d/64, uint64(1)<<(d%64)
	if w < len(s.low) {
		return s.low[w]&bit != 0
	}
	return s.high[w-len(s.low)]&bit != 0
}

// plain marks the string bytes that need no attention: everything but
// control bytes, the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

var hex = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()
