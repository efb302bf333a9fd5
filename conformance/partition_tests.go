package conformance

import (
	"context"

	"github.com/tidemarkdb/tidemark/core/eventstore"
)

// partitionVectors are the spec's partition keys (FNV-1a, 32 bits, of the
// aggregate id's UTF-8 bytes, modulo the partition count) for 8
// partitions, computed outside Go (FNV-1a("a") = 0xe40c292c, the
// published test vector): fixed numbers, not the function under test.
var partitionVectors = []struct {
	id        string
	fnv1a     uint32
	partition int
}{
	{"a", 0xe40c292c, 4},
	{"b", 0xe70c2de5, 5},
	{"account-1", 0x3aa68c96, 6},
	{"ACCOUNT-1", 0xbde51b76, 6},
	{"😀", 0x33a29608, 0},
	{"konto-Ω", 0x601c5ef4, 4},
	{"x-42", 0x39dc52c4, 4},
	{"z", 0xff0c53ad, 5},
}

func testPartitions(t T, env *Env) {
	s, e := openStore(t, env)
	if e.Partitions != 8 {
		t.Fatalf("the suite opens 8 partitions, the engine has %d", e.Partitions)
	}
	ctx := context.Background()
	want := map[string]int{}
	for _, v := range partitionVectors {
		want[v.id] = v.partition
		appendAndPublish(t, s, e, eventstore.Stream{AggregateType: "bank.Account", AggregateID: v.id, Events: []eventstore.Event{ev("test.E", `{}`)}})
	}
	total := 0
	for p := range e.Partitions {
		evs, err := s.ReadPartition(ctx, p, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range evs {
			total++
			if r.PartitionKey != p || want[r.AggregateID] != p {
				t.Errorf("event of %q in partition %d (partition_key %d), the spec's FNV-1a says %d", r.AggregateID, p, r.PartitionKey, want[r.AggregateID])
			}
		}
	}
	if total != len(partitionVectors) {
		t.Errorf("partitions hold %d events, want %d", total, len(partitionVectors))
	}
	if _, err := s.ReadPartition(ctx, e.Partitions, 0, 10); err == nil {
		t.Errorf("reading partition %d of %d: want an error", e.Partitions, e.Partitions)
	}
}
