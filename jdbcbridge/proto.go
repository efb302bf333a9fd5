package jdbcbridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// Wire protocol constants; they mirror jdbcbridge/java/tidemark/bridge/Protocol.java.
const (
	protocolVersion = 1

	opHello       = 1
	opOpen        = 2
	opPrepare     = 3
	opExecute     = 4
	opFetch       = 5
	opCloseCursor = 6
	opCloseStmt   = 7
	opBegin       = 8
	opCommit      = 9
	opRollback    = 10
	opCancel      = 11
	opPing        = 12
	opReset       = 13
	opLobRead     = 14
	opLobFree     = 15
	opClose       = 16

	statusOK    = 0
	statusError = 1

	flagGeneratedKeys = 1

	resultUpdate = 0
	resultRows   = 1

	tagNull        = 0
	tagBool        = 1
	tagInt64       = 2
	tagDouble      = 3
	tagDecimal     = 4
	tagString      = 5
	tagBytes       = 6
	tagDate        = 7
	tagTime        = 8
	tagTimestamp   = 9
	tagTimestampTZ = 10
	tagUUID        = 11
	tagClob        = 12
	tagBlob        = 13

	maxFrame = 512 << 20
)

var errShortFrame = errors.New("jdbcbridge: truncated frame from server")

// encoder builds one request frame: 4 bytes of length, request id, op, payload.
type encoder struct{ b []byte }

func (e *encoder) reset(req uint32, op byte) {
	e.b = append(e.b[:0], 0, 0, 0, 0)
	e.b = binary.BigEndian.AppendUint32(e.b, req)
	e.b = append(e.b, op)
}

func (e *encoder) frame() []byte {
	binary.BigEndian.PutUint32(e.b[:4], uint32(len(e.b)-4))
	return e.b
}

func (e *encoder) u8(v byte)    { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) i32(v int32)  { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *encoder) i64(v int64)  { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }
func (e *encoder) str(s string) { e.i32(int32(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(p []byte) {
	e.i32(int32(len(p)))
	e.b = append(e.b, p...)
}

// value encodes one parameter already normalised by CheckNamedValue.
func (e *encoder) value(v any) error {
	switch x := v.(type) {
	case nil:
		e.u8(tagNull)
	case bool:
		e.u8(tagBool)
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case int64:
		e.u8(tagInt64)
		e.i64(x)
	case float64:
		e.u8(tagDouble)
		e.i64(int64(math.Float64bits(x)))
	case string:
		e.u8(tagString)
		e.str(x)
	case []byte:
		e.u8(tagBytes)
		e.bytes(x)
	case time.Time:
		_, off := x.Zone()
		e.u8(tagTimestampTZ)
		e.i64(x.Unix())
		e.i32(int32(x.Nanosecond()))
		e.i32(int32(off))
	case uuidValue:
		e.u8(tagUUID)
		e.b = append(e.b, x[:]...)
	case Decimal:
		e.u8(tagDecimal)
		e.str(string(x))
	default:
		return fmt.Errorf("jdbcbridge: unsupported parameter type %T", v)
	}
	return nil
}

// decoder reads a response payload.
type decoder struct {
	b   []byte
	pos int
	err error
}

func (d *decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || d.pos+n > len(d.b) {
		d.err = errShortFrame
		return false
	}
	return true
}

func (d *decoder) u8() byte {
	if !d.need(1) {
		return 0
	}
	v := d.b[d.pos]
	d.pos++
	return v
}

func (d *decoder) u16() uint16 {
	if !d.need(2) {
		return 0
	}
	v := binary.BigEndian.Uint16(d.b[d.pos:])
	d.pos += 2
	return v
}

func (d *decoder) i32() int32 {
	if !d.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(d.b[d.pos:])
	d.pos += 4
	return int32(v)
}

func (d *decoder) i64() int64 {
	if !d.need(8) {
		return 0
	}
	v := binary.BigEndian.Uint64(d.b[d.pos:])
	d.pos += 8
	return int64(v)
}

func (d *decoder) raw() []byte {
	n := int(d.i32())
	if n < 0 {
		return nil
	}
	if !d.need(n) {
		return nil
	}
	v := d.b[d.pos : d.pos+n]
	d.pos += n
	return v
}

func (d *decoder) str() string { return string(d.raw()) }

// lobRef is a large object that must be fetched with opLobRead before the row is returned.
type lobRef struct {
	id     int32
	clob   bool
	length int64
}

// value decodes one tagged value. Byte slices are copied so rows can be retained.
func (d *decoder) value() any {
	switch tag := d.u8(); tag {
	case tagNull:
		return nil
	case tagBool:
		return d.u8() != 0
	case tagInt64:
		return d.i64()
	case tagDouble:
		return math.Float64frombits(uint64(d.i64()))
	case tagDecimal, tagString:
		r := d.raw()
		if !utf8.Valid(r) && d.err == nil {
			// The server encodes strictly; anything else is a protocol fault, not text.
			d.err = &Error{State: "22021", Message: "the bridge sent text that is not valid UTF-8"}
		}
		return string(r)
	case tagBytes:
		r := d.raw()
		return append(make([]byte, 0, len(r)), r...)
	case tagDate:
		return time.Unix(d.i64()*86400, 0).UTC()
	case tagTime:
		ns := d.i64()
		return time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(ns))
	case tagTimestamp:
		sec := d.i64()
		return time.Unix(sec, int64(d.i32())).UTC()
	case tagTimestampTZ:
		sec := d.i64()
		ns := d.i32()
		off := d.i32()
		t := time.Unix(sec, int64(ns))
		if off == 0 {
			return t.UTC()
		}
		return t.In(time.FixedZone("", int(off)))
	case tagUUID:
		if !d.need(16) {
			return nil
		}
		var u uuidValue
		copy(u[:], d.b[d.pos:d.pos+16])
		d.pos += 16
		return u.String()
	case tagClob, tagBlob:
		id := d.i32()
		return lobRef{id: id, clob: tag == tagClob, length: d.i64()}
	default:
		if d.err == nil {
			d.err = fmt.Errorf("jdbcbridge: unknown value tag %d from server", tag)
		}
		return nil
	}
}

// uuidValue is the normalised form of a UUID parameter.
type uuidValue [16]byte

func (u uuidValue) String() string {
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j] = hex[c>>4]
		b[j+1] = hex[c&15]
		j += 2
	}
	return string(b[:])
}

// Decimal is a parameter sent to the server as an exact decimal literal (for example
// Decimal("12345.678900")); it binds with setBigDecimal. Plain strings also work for
// DECIMAL/NUMERIC parameters whose type the JDBC driver reports.
type Decimal string
