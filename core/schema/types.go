package schema

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// typeFamilies maps the spellings of one type, as written in DDL or as a
// catalogue reports it, to one name. It is the only such table: the
// query-table check and the conformance suite both read it.
var typeFamilies = map[string]string{
	"VARCHAR": "VARCHAR", "CHARACTER VARYING": "VARCHAR", "VARCHAR2": "VARCHAR", "VARYING CHARACTER": "VARCHAR",
	"CHAR": "CHAR", "CHARACTER": "CHAR", "BPCHAR": "CHAR",
	"NVARCHAR": "NVARCHAR", "NATIONAL CHARACTER VARYING": "NVARCHAR", "NVARCHAR2": "NVARCHAR",
	"NCHAR": "NCHAR", "NATIONAL CHARACTER": "NCHAR",
	"TEXT": "LARGE TEXT", "CLOB": "LARGE TEXT", "LONGTEXT": "LARGE TEXT", "MEDIUMTEXT": "LARGE TEXT", "LONGVARCHAR": "LARGE TEXT",
	"CHARACTER LARGE OBJECT": "LARGE TEXT", "NTEXT": "LARGE TEXT", "NCLOB": "LARGE TEXT", "NATIONAL CHARACTER LARGE OBJECT": "LARGE TEXT",
	"TINYINT":  "TINYINT",
	"SMALLINT": "SMALLINT", "INT2": "SMALLINT",
	"INT": "INTEGER", "INTEGER": "INTEGER", "INT4": "INTEGER",
	"BIGINT": "BIGINT", "INT8": "BIGINT",
	"BOOLEAN": "BOOLEAN", "BOOL": "BOOLEAN", "BIT": "BIT",
	"JSON":    "JSON",
	"UUID":    "UUID",
	"DECIMAL": "DECIMAL", "NUMERIC": "DECIMAL", "DEC": "DECIMAL",
	"DATE": "DATE",
	"TIME": "TIME", "TIME WITHOUT TIME ZONE": "TIME",
	"TIMESTAMP": "TIMESTAMP", "TIMESTAMP WITHOUT TIME ZONE": "TIMESTAMP",
	"TIMESTAMPTZ": "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE": "TIMESTAMPTZ",
	"DATETIME": "DATETIME", "DATETIME2": "DATETIME",
}

// TypeFamily is the family of a type spelling (upper case, blanks
// collapsed, without its (n) or (p,s)); an unknown spelling is its own family.
func TypeFamily(t string) string {
	if f, ok := typeFamilies[t]; ok {
		return f
	}
	return t
}

// StandardQueryTypes are the families a query-table column of each kind may
// have when the dialect declares none for it (EngineFacts.QueryTypes).
var StandardQueryTypes = map[dialect.QueryFieldKind][]string{
	dialect.KindText:    {"CHAR", "VARCHAR", "NCHAR", "NVARCHAR", "LARGE TEXT"},
	dialect.KindInteger: {"BIGINT"},
	dialect.KindDecimal: {"DECIMAL"},
	dialect.KindDate:    {"DATE"},
	dialect.KindTime:    {"TIME"},
	dialect.KindInstant: {"TIMESTAMP", "DATETIME"},
	dialect.KindBoolean: {"BOOLEAN", "BIT"},
}

// QueryTypesOf returns the families a column of kind k may have on the
// dialect: its declaration, or the standard's.
func QueryTypesOf(cat *dialect.Catalogue, k dialect.QueryFieldKind) []string {
	if fams, ok := cat.Facts.QueryTypes[k]; ok {
		return fams
	}
	return StandardQueryTypes[k]
}

// specDecimalPrecision is the widest decimal the core asks for: the spec's
// @QueryField precision ends at 38.
const specDecimalPrecision = 38

// MaxDecimalPrecision is the widest NUMBER_DECIMAL field the dialect
// accepts: its declared EngineFacts.MaxDecimalPrecision, at most 38.
func MaxDecimalPrecision(cat *dialect.Catalogue) int {
	p := cat.Facts.MaxDecimalPrecision
	if p <= 0 || p > specDecimalPrecision {
		return specDecimalPrecision
	}
	return p
}

// specTimeDigits is the spec's TIMESTAMP(6): microseconds.
const specTimeDigits = 6

// RequiredInstantDigits is the fractional-second digits an existing
// instant query column must keep, and the digits the core binds: the
// spec's 6, or fewer where the engine declares it stores fewer
// (EngineFacts.InstantDigits).
func RequiredInstantDigits(cat *dialect.Catalogue) int {
	if d := cat.Facts.InstantDigits; d > 0 && d < specTimeDigits {
		return d
	}
	return specTimeDigits
}

// RequiredTimeDigits is the same for a time-of-day query column
// (EngineFacts.TimeOfDayDigits), where 0 is a declared fact when
// TimeDigits is set.
func RequiredTimeDigits(cat *dialect.Catalogue) int {
	if cat.Facts.TimeDigits == nil {
		return RequiredInstantDigits(cat)
	}
	return min(max(*cat.Facts.TimeDigits, 0), specTimeDigits)
}

// SameType tells whether a column read back from the catalogue has the type
// a DDL statement declared (families compared, lengths not), and names the
// engine equivalence it relied on, if any. The equivalences are engine
// behaviours, not dialect names, so a third-party dialect on the same
// engine gets them too.
func SameType(declared string, read Column) (ok bool, alias string) {
	want, got := TypeFamily(declared), TypeFamily(read.Type)
	switch {
	case want == got:
		return true, ""
	case want == "BOOLEAN" && got == "TINYINT":
		// MySQL and MariaDB store BOOLEAN as TINYINT(1).
		return true, "BOOLEAN as TINYINT"
	case want == "LARGE TEXT" && got == "VARCHAR" && read.Length != nil && *read.Length >= 16*1024*1024:
		// A large-text declaration stored as a VARCHAR of at least 16M
		// characters: HSQLDB's LONGVARCHAR (16,777,216 unless
		// sql.longvar_is_lob) and H2 2.1's TEXT (1,000,000,000), neither a
		// large object but wide enough for any value the core writes.
		return true, declared + " as CHARACTER VARYING(" + strconv.FormatInt(*read.Length, 10) + ")"
	}
	return false, ""
}

// The driver-value helpers below read catalogue rows however a driver
// returns them (int64, int32, []byte, string, bool, float64, …); the schema
// check and the conformance suite share them.

// AsString reads a text value; nil is "".
func AsString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// AsBool reads a boolean as drivers return one: bool, a number (non-zero
// is true) or text ("1", "true", "t", "yes", "y", any case).
func AsBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int64:
		return x != 0
	case int32:
		return x != 0
	case int:
		return x != 0
	case float64:
		return x != 0
	case []byte, string:
		s := strings.ToLower(strings.TrimSpace(AsString(x)))
		return s == "1" || s == "true" || s == "t" || s == "yes" || s == "y"
	}
	return false
}

// AsInt64 reads a nullable integer as drivers return it; nil is nil.
func AsInt64(v any) (*int64, error) {
	var n int64
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int:
		n = int64(x)
	case int16:
		n = int64(x)
	case int8:
		n = int64(x)
	case uint64:
		n = int64(x)
	case uint32:
		n = int64(x)
	case float64:
		n = int64(x)
	case []byte, string:
		s := strings.TrimSpace(AsString(x))
		p, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil {
				return nil, fmt.Errorf("not an integer: %q", s)
			}
			p = int64(f)
		}
		n = p
	default:
		return nil, fmt.Errorf("unexpected %T %v", v, v)
	}
	return &n, nil
}

// timeLayouts are the text forms drivers return times in (SQLite's driver
// writes the second; the JDBC bridge and some MySQL settings return text).
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999 -0700 MST", // time.Time.String(), SQLite's driver's default
}

// AsTime reads a timestamp returned as time.Time or as text. A value of a
// column without a zone is taken as written: the core stores UTC there, so
// its wall clock is returned in UTC whatever location the driver attached.
func AsTime(v any, zoned bool) (time.Time, error) {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case string, []byte:
		s := strings.TrimSpace(AsString(x))
		ok := false
		for _, l := range timeLayouts {
			if p, err := time.Parse(l, s); err == nil {
				t, ok = p, true
				break
			}
		}
		if !ok {
			return time.Time{}, fmt.Errorf("cannot parse time %q", s)
		}
	default:
		return time.Time{}, fmt.Errorf("cannot read %T as a time", v)
	}
	if zoned {
		return t.UTC(), nil
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), nil
}
