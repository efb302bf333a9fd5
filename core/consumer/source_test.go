package consumer

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/topic"
)

// TestRecordCopyFormat pins CONSUMER_UNDELIVERED_MESSAGES.message_copy of a
// capture record: rows written before must still restore.
func TestRecordCopyFormat(t *testing.T) {
	r := topic.Record{ID: "0190a1b2-0000-7000-8000-000000000001", Position: 7, Partition: 3, Type: "t", Revision: 2,
		Payload: []byte(`{"a": 1}`), Metadata: []byte(""), OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), Key: "k"}
	got, err := copyOfRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"0190a1b2-0000-7000-8000-000000000001","type":"t","revision":2,"payload":"{\"a\": 1}","metadata":"","occurred_at":"2026-01-02T03:04:05.000006Z","key":"k"}`
	if got != want {
		t.Fatalf("copy\n got %s\nwant %s", got, want)
	}
	rec, err := recordFromCopy(3, 7, "k", got)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != r.ID || rec.Position != 7 || rec.Partition != 3 || string(rec.Payload) != `{"a": 1}` || rec.Metadata == nil || !rec.OccurredAt.Equal(r.OccurredAt) {
		t.Fatalf("restored %+v, want %+v", rec, r)
	}
}

// TestUndeliveredRowJSON pins the row as the CLI's --json prints it: a
// zero NextRetryAt is null, a set one a time.
func TestUndeliveredRowJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	u := UndeliveredRow{ID: "i", Source: "s", Partition: 1, Key: "k", Position: 2, Status: StatusFailed, FailureCount: 3, RecordedAt: at}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"i","source":"s","partition":1,"key":"k","position":2,"status":"FAILED","failure_count":3,"next_retry_at":null,"recorded_at":"2026-01-02T03:04:05Z"}`
	if string(b) != want {
		t.Fatalf("json\n got %s\nwant %s", b, want)
	}
	u.NextRetryAt = at
	var back UndeliveredRow
	if b, err = json.Marshal(u); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil || back != u {
		t.Fatalf("round trip %s: %+v, %v", b, back, err)
	}
}
