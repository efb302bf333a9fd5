package eventstore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// checkEventStdlib is checkEvent as it was before internal/jsonvalid:
// encoding/json.Valid and the field names built for every event. The test
// holds the new check to its answers and the benchmark to its cost.
func checkEventStdlib(i int, ev Event) error {
	field := fmt.Sprintf("event %d", i)
	if err := checkKey(field+" type", ev.Type, false); err != nil {
		return err
	}
	if err := checkUTF8(field+" payload", ev.Payload); err != nil {
		return err
	}
	if err := checkUTF8(field+" metadata", ev.Metadata); err != nil {
		return err
	}
	if !json.Valid(ev.Payload) {
		return &InvalidEventError{Field: field + " payload", Reason: "is not a JSON document"}
	}
	if ev.Metadata != nil && !json.Valid(ev.Metadata) {
		return &InvalidEventError{Field: field + " metadata", Reason: "is not a JSON document"}
	}
	return nil
}

// TestCheckEventMatchesStdlibCheck: the fast check refuses exactly the
// events the encoding/json check refused, with the same error.
func TestCheckEventMatchesStdlibCheck(t *testing.T) {
	long := strings.Repeat("é", MaxKeyLength)
	docs := []string{`{}`, `{"a":1}`, `[1,2]`, `"s"`, `1`, `null`, ``, ` `, `{`, `{"a":}`, `01`, `[1,]`,
		`{"a":"\u00e9"}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", "\"\xff\"", `{"a":1} {}`, "\n[ true ]\t"}
	types := []string{"t", "", long, long + "x", "a\x00b", "\xff", "bank.Deposited", strings.Repeat("a", MaxKeyLength+1)}
	var evs []Event
	for _, d := range docs {
		evs = append(evs, Event{Type: "t", Payload: []byte(d)})
		evs = append(evs, Event{Type: "t", Payload: []byte(`{}`), Metadata: []byte(d)})
	}
	for _, ty := range types {
		evs = append(evs, Event{Type: ty, Payload: []byte(`{}`)})
	}
	evs = append(evs, Event{Type: "t", Payload: nil}, Event{Type: "t", Payload: []byte(`{}`), Metadata: []byte{}})
	refused := 0
	for i, ev := range evs {
		got, want := checkEvent(i, ev), checkEventStdlib(i, ev)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("event %d (type %.10q, payload %q, metadata %q): error %v, the encoding/json check says %v",
				i, ev.Type, ev.Payload, ev.Metadata, got, want)
		}
		if want != nil {
			refused++
		}
	}
	if refused == 0 || refused == len(evs) {
		t.Fatalf("%d of %d events refused: the corpus does not cover both answers", refused, len(evs))
	}
}

// BenchmarkCheckEvents measures the per-event check of an append of 1 and
// of 100 events with the bench's payload (and a metadata document), with
// encoding/json (stdlib) and now.
func BenchmarkCheckEvents(b *testing.B) {
	payload := []byte(`{"amount":125.5,"currency":"EUR","note":"benchmark event payload of a typical size"}`)
	meta := []byte(`{"correlation_id":"8f14e45f-ceea-467f-a8f0-5b6a3c1d2e4f","user":"u-42"}`)
	for _, n := range []int{1, 100} {
		evs := make([]Event, n)
		for i := range evs {
			evs[i] = Event{Type: "bench.Deposited", Payload: payload, Metadata: meta}
		}
		for _, c := range []struct {
			name  string
			check func(int, Event) error
		}{{"stdlib", checkEventStdlib}, {"jsonvalid", checkEvent}} {
			b.Run(fmt.Sprintf("%s/%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					for i, ev := range evs {
						if err := c.check(i, ev); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
