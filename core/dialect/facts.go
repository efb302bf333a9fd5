package dialect

import (
	"time"
	"unicode/utf8"
)

// EngineFacts are properties of the engine, declared by the dialect, that the
// core and the conformance suite read instead of guessing them from the
// dialect's name or quote character. The suite checks every claim on the
// real engine (time/*, querytable/*). The identifier limit is
// Identity.MaxIdentifierLength.
type EngineFacts struct {
	// QueryTypes lists, per query-field kind, the type families (as
	// schema.TypeFamily names them: "VARCHAR", "LARGE TEXT", "BIGINT",
	// "DECIMAL", "DATE", "TIME", "TIMESTAMP", "DATETIME", "BOOLEAN", "BIT",
	// "TINYINT", …) an existing query-table column may have for that kind.
	// A kind left out accepts the standard's families (schema.StandardQueryTypes);
	// MySQL, for instance, accepts TINYINT for BOOLEAN and refuses TIMESTAMP
	// (it ends in 2038) for an instant.
	QueryTypes map[QueryFieldKind][]string `json:"query_types,omitempty"`
	// EventTimeDigits is how many fractional-second digits an event's
	// occurred_at keeps as written by the core (6: microseconds, 7: SQL
	// Server's DATETIME2, 9: SQLite's text). A time is cut to this many
	// digits, never rounded up; 0 means not declared, which the suite
	// reports as a failure of time/* (truncation must be declared).
	EventTimeDigits int `json:"event_time_digits,omitempty"`
	// InstantDigits is the same for a TEMPORAL_INSTANT query column of the
	// type QueryColumns.Types declares. The core binds an instant cut to
	// min(6, InstantDigits) digits, and an existing column must keep them.
	InstantDigits int `json:"instant_digits,omitempty"`
	// TimeDigits is the same for a TEMPORAL_TIME (time of day) column,
	// where an engine's TIME may keep fewer digits than its TIMESTAMP (0 on
	// an engine whose TIME has no fraction). nil: as InstantDigits. Declare
	// it with Digits(n).
	TimeDigits *int `json:"time_digits,omitempty"`
	// MaxDecimalPrecision is the most digits a DECIMAL column of this
	// engine holds exactly (65 on MySQL, 38 on SQL Server, 18 on Firebird 3;
	// the core never asks for more than 38). A NUMBER_DECIMAL field wider
	// than this is refused before any SQL. 0 means 38.
	MaxDecimalPrecision int `json:"max_decimal_precision,omitempty"`
	// TextUnit is what the engine's VARCHAR(n) counts: characters (code
	// points, the default), UTF-16 code units (Java engines, SQL Server's
	// NVARCHAR: a character beyond U+FFFF takes two) or bytes. The core
	// checks the text it writes into the spec's VARCHAR(255) columns in
	// this unit as well as in characters, so a value the column cannot hold
	// is refused before any SQL.
	TextUnit TextUnit `json:"text_unit,omitempty"`
	// AggregateIDLength is the length, in TextUnit, of the event store's
	// aggregate_id column where the DDL widens it so that 255 characters
	// fit whatever the unit (VARCHAR(510) for UTF-16 units); 0 means 255.
	AggregateIDLength int `json:"aggregate_id_length,omitempty"`
	// NoIfNotExists is true when the engine has no IF NOT EXISTS for CREATE
	// TABLE, INDEX or SEQUENCE and the scripts are written without it: the
	// core then guards each such statement with the dialect's existence
	// query (Introspection.TableExists, QueryColumns.IndexExists,
	// Introspection.SequenceExists), so a script still runs twice safely.
	NoIfNotExists bool `json:"no_if_not_exists,omitempty"`
}

// TextUnit is what a VARCHAR's length counts (EngineFacts.TextUnit).
type TextUnit string

// The units a VARCHAR's length may count.
const (
	TextCharacters TextUnit = ""      // Unicode code points
	TextUTF16      TextUnit = "utf16" // UTF-16 code units
	TextBytes      TextUnit = "bytes" // UTF-8 bytes
)

// Len is the length of s, valid UTF-8, in unit u.
func (u TextUnit) Len(s string) int {
	switch u {
	case TextBytes:
		return len(s)
	case TextUTF16:
		n := 0
		for _, r := range s {
			n++
			if r > 0xFFFF {
				n++
			}
		}
		return n
	}
	return utf8.RuneCountInString(s)
}

// Name is the unit's name in messages.
func (u TextUnit) Name() string {
	switch u {
	case TextBytes:
		return "bytes"
	case TextUTF16:
		return "UTF-16 code units"
	}
	return "characters"
}

// TextFits tells whether s, valid UTF-8, fits a VARCHAR(length) of the
// engine (length in TextUnit), and its length in that unit when it does
// not. A string of at most length bytes fits every unit: only a longer one
// is counted.
func (f EngineFacts) TextFits(s string, length int) (units int, ok bool) {
	if len(s) <= length {
		return 0, true
	}
	n := f.TextUnit.Len(s)
	return n, n <= length
}

// AggregateIDFits is TextFits for the event store's aggregate_id column.
func (f EngineFacts) AggregateIDFits(s string) (units, length int, ok bool) {
	length = f.AggregateIDLength
	if length <= 0 {
		length = 255
	}
	units, ok = f.TextFits(s, length)
	return units, length, ok
}

// Digits is n as EngineFacts.TimeDigits declares it.
func Digits(n int) *int { return &n }

// TimeOfDayDigits is the fractional-second digits a TEMPORAL_TIME column
// keeps: TimeDigits when declared, InstantDigits otherwise.
func (f EngineFacts) TimeOfDayDigits() int {
	if f.TimeDigits != nil {
		return *f.TimeDigits
	}
	return f.InstantDigits
}

// CutEventTime is t in UTC cut (never rounded) to EventTimeDigits, the form
// the core binds: an engine that rounds extra digits (H2, SQL Server,
// MySQL 8) then stores exactly the declared cut. Undeclared (0) leaves t whole.
func (f EngineFacts) CutEventTime(t time.Time) time.Time {
	t = t.UTC()
	if f.EventTimeDigits <= 0 || f.EventTimeDigits >= 9 {
		return t
	}
	d := time.Duration(1)
	for i := f.EventTimeDigits; i < 9; i++ {
		d *= 10
	}
	return t.Truncate(d)
}
