package eventstore

import "testing"

// Published test vectors: FNV-1a (32-bit) over the UTF-8 bytes of the
// aggregate id, then modulo the partition count. The hashes are the
// reference FNV-1a values.
var partitionVectors = []struct {
	id   string
	hash uint32
	n    int
	part int
}{
	{"", 0x811c9dc5, 16, 5},
	{"a", 0xe40c292c, 16, 12},
	{"foobar", 0xbf9cf968, 16, 8},
	{"acc-1", 0xabe56eac, 16, 12},
	{"BA-7", 0x4ad88f0c, 16, 12},
	{"BA-17", 0, 16, 3},
}

func TestPartitionKeyVectors(t *testing.T) {
	for _, v := range partitionVectors {
		if got := PartitionKey(v.id, v.n); got != v.part || v.hash != 0 && int(v.hash%uint32(v.n)) != v.part {
			t.Errorf("PartitionKey(%q, %d) = %d, want %d (hash %#x)", v.id, v.n, got, v.part, v.hash)
		}
	}
	// The key depends on bytes, not characters: case matters.
	if PartitionKey("account-1", 1<<15) == PartitionKey("ACCOUNT-1", 1<<15) {
		t.Errorf("case-only different ids hash alike")
	}
}

func TestExpectedVersion(t *testing.T) {
	if Any != ExpectedVersion(0) {
		t.Fatal("the zero value must be Any")
	}
	for _, c := range []struct {
		exp    ExpectedVersion
		actual int64
		ok     bool
	}{
		{Any, -1, true}, {Any, 5, true}, {NoStream, -1, true}, {NoStream, 0, false},
		{StreamExists, -1, false}, {StreamExists, 0, true}, {Exactly(0), 0, true},
		{Exactly(0), -1, false}, {Exactly(3), 2, false},
	} {
		if got := versionMatches(c.exp, c.actual); got != c.ok {
			t.Errorf("%v vs %d: %v", c.exp, c.actual, got)
		}
	}
}
