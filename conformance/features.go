package conformance

import (
	"fmt"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// Features are what a dialect's catalogue declares the engine can do, the
// way watermill's tests.Features describe a Pub/Sub: the suite reads them
// instead of a dialect's name, so a new engine that declares less (an
// 18-digit DECIMAL, 4 fractional digits, 31-character names) runs the same
// tests at its own limits. Every declared fact is checked on the engine by
// some test (time/*, querytable/widest_decimal_exact, schema/*).
type Features struct {
	// MaxDecimalPrecision is the widest NUMBER_DECIMAL the suite's query
	// table declares: the engine's declared maximum, at most 38.
	MaxDecimalPrecision int
	// EventTimeDigits and InstantDigits are the fractional-second digits an
	// event time and a query-table instant keep (EngineFacts); 0 is
	// undeclared.
	EventTimeDigits int
	InstantDigits   int
	// MaxIdentifierLength is Identity.MaxIdentifierLength.
	MaxIdentifierLength int
	// CounterPositions is true for the CounterRow strategy, false for
	// SequenceXIDHorizon.
	CounterPositions bool
	// OneStatementAppend is true when a single-stream append is one
	// autocommit INSERT (RowInsert.ReturnsPositions with NextSequence).
	OneStatementAppend bool
	// ComputedSequence is true when the insert of a single-event append
	// with no expected version computes the stream's next sequence number
	// and returns it (RowInsert.NextSequence with an insert that draws the
	// positions, or with a counter row's RowInsert.ComputedTail): such an
	// append reads no version.
	ComputedSequence bool
	// SkipLocked is LockForms.SkipLocked.
	SkipLocked bool
}

// FeaturesOf derives the features from a catalogue.
func FeaturesOf(cat dialect.Catalogue) Features {
	return Features{
		MaxDecimalPrecision: schema.MaxDecimalPrecision(&cat),
		EventTimeDigits:     cat.Facts.EventTimeDigits,
		InstantDigits:       cat.Facts.InstantDigits,
		MaxIdentifierLength: cat.Identity.MaxIdentifierLength,
		CounterPositions:    cat.Positions == dialect.CounterRow,
		OneStatementAppend:  cat.Positions == dialect.SequenceXIDHorizon && cat.EventInsert.NextSequence != "", // the sequence strategy draws positions in the insert
		ComputedSequence: cat.EventInsert.NextSequence != "" &&
			(cat.Positions == dialect.SequenceXIDHorizon || cat.Positions == dialect.CounterRow && cat.EventInsert.ComputedTail != ""),
		SkipLocked: cat.Locks.SkipLocked,
	}
}

// String is one line for the test log.
func (f Features) String() string {
	return fmt.Sprintf("features: DECIMAL up to %d digits, event times %s, instants %s, names up to %d characters, counter positions %v, one-statement append %v",
		f.MaxDecimalPrecision, digits(f.EventTimeDigits), digits(f.InstantDigits), f.MaxIdentifierLength, f.CounterPositions, f.OneStatementAppend)
}

func digits(n int) string {
	if n == 0 {
		return "undeclared"
	}
	return fmt.Sprintf("to %d digits", n)
}

// fixtureQueryTable is the suite's query table at the engine's widest
// declared decimal: DECIMAL(38,10) where the engine holds 38 digits,
// DECIMAL(18,10) on an engine that stops at 18.
func (f Features) fixtureQueryTable() schema.QueryTable {
	q := testQueryTable
	q.Fields = append([]schema.QueryField(nil), testQueryTable.Fields...)
	for i := range q.Fields {
		if q.Fields[i].Kind == dialect.KindDecimal {
			q.Fields[i].Precision = f.MaxDecimalPrecision
			q.Fields[i].Scale = min(10, f.MaxDecimalPrecision/2)
		}
	}
	return q
}

// truncate cuts t to n fractional-second digits (never rounds up), as an
// engine declaring n digits stores it.
func truncate(t time.Time, n int) time.Time {
	d := time.Duration(1)
	for i := n; i < 9; i++ {
		d *= 10
	}
	return t.Truncate(d)
}
