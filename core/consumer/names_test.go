package consumer

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	cases := []struct {
		v      string
		limit  int
		pad    bool
		refuse bool
	}{
		{"account-summary", 255, false, false},
		{"", 255, false, true},
		{strings.Repeat("a", 32), 32, false, false},
		{strings.Repeat("a", 33), 32, false, true},
		{strings.Repeat("é", 255), 255, false, false}, // characters, not bytes
		{"a\x00b", 255, false, true},
		{"\xff", 255, false, true},
		{"trailing ", 255, false, false},
		{"trailing ", 255, true, true},
		{" leading", 255, true, false},
	}
	for _, c := range cases {
		err := checkName("consumer name", c.v, c.limit, c.pad, "engine")
		var ie *InvalidNameError
		if got := errors.As(err, &ie) && errors.Is(err, ErrInvalidName); got != c.refuse {
			t.Errorf("checkName(%q, %d, pad %v) = %v, want refused %v", c.v, c.limit, c.pad, err, c.refuse)
		}
	}
}

// TestCheckSourceNames: sources of one subscription equal ignoring case,
// or given twice, are refused; distinct ones pass.
func TestCheckSourceNames(t *testing.T) {
	for _, c := range []struct {
		names  []string
		refuse bool
	}{
		{[]string{"event-store", "event-capture"}, false},
		{[]string{"src", "Src"}, true},
		{[]string{"src", "other", "SRC"}, true},
		{[]string{"src", "src"}, true},
	} {
		var refs []SourceRef
		for _, n := range c.names {
			refs = append(refs, SourceRef{Name: n, Partitions: 1})
		}
		err := checkSourceNames(refs)
		if got := errors.Is(err, ErrInvalidName); got != c.refuse {
			t.Errorf("%v: %v, want refused %v", c.names, err, c.refuse)
		}
	}
}

// TestWorkerOfSpreadsOnePartition: the keys of one partition (same low bits
// of FNV-1a) must not all land on one worker.
func TestWorkerOfSpreadsOnePartition(t *testing.T) {
	const partitions, workers = 16, 4
	used := map[int]bool{}
	n := 0
	for i := 0; n < 40; i++ {
		id := fmt.Sprintf("acc-%d", i)
		if fnv32(id)%partitions != 3 {
			continue
		}
		n++
		used[WorkerOf("bank.Account/"+id, workers)] = true
	}
	if len(used) < workers {
		t.Errorf("40 keys of one partition used %d of %d workers", len(used), workers)
	}
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func TestContiguous(t *testing.T) {
	p := &partState{read: 20, pending: map[int64]bool{7: true, 12: true}}
	if c := p.contiguous(); c != 6 {
		t.Errorf("contiguous = %d, want 6 (7 still pending, 12 applied later does not count)", c)
	}
	delete(p.pending, 7)
	if c := p.contiguous(); c != 11 {
		t.Errorf("contiguous = %d, want 11", c)
	}
	delete(p.pending, 12)
	if c := p.contiguous(); c != 20 {
		t.Errorf("contiguous = %d, want 20", c)
	}
}
