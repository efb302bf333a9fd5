package lease

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"sort"
)

// Distribution is how a consumer's partitions are spread over the instances
// running it.
type Distribution string

// Distributions.
const (
	// Spread (the default) spreads the partitions by rendezvous hashing with
	// a bounded load: no instance holds more than ⌈partitions / instances⌉.
	Spread Distribution = ""
	// SingleOwner holds every partition of the consumer on one instance (the
	// spec's distribution: single-owner).
	SingleOwner Distribution = "single-owner"
)

// Bound is the most partitions one of n instances may hold under Spread:
// ⌈partitions / n⌉ (8 over 3 is 3, so 3/3/2, never 5/1/2).
func Bound(partitions, n int) int {
	if n <= 0 {
		return 0
	}
	return (partitions + n - 1) / n
}

// Assign is the distribution of a consumer's partitions 0..partitions-1 over
// the live members, as a map partition → instance id. It is a pure function:
// every instance that reads the same rows computes the same assignment.
//
// current holds the live owners (partition → instance; owners that are not
// in members are ignored). Under Spread each member keeps the partitions it
// holds up to the bound, preferring those it weighs highest; every other
// partition goes to the member of highest rendezvous weight (a hash of
// consumer, partition and instance id) that is still below the bound,
// highest weights first. So an instance leaving moves only its own
// partitions (the bound only grows), and one joining moves only what the
// lowered bound takes from the others; with current empty it is plain
// rendezvous hashing with bounded loads. Under SingleOwner every partition
// goes to the member holding most of them already, else to the member of
// highest weight for the consumer.
func Assign(consumer string, partitions int, members []string, current map[int]string, d Distribution) map[int]string {
	ms := slices.Clone(members)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	out := make(map[int]string, partitions)
	if len(ms) == 0 || partitions <= 0 {
		return out
	}
	isMember := make(map[string]bool, len(ms))
	for _, m := range ms {
		isMember[m] = true
	}
	if d == SingleOwner {
		owner := singleOwner(consumer, partitions, ms, current, isMember)
		for p := range partitions {
			out[p] = owner
		}
		return out
	}
	bound := Bound(partitions, len(ms))
	load := make(map[string]int, len(ms))
	// Keep: each member's current partitions, highest weight first, up to
	// the bound.
	held := map[string][]int{}
	for p, m := range current {
		if isMember[m] && p >= 0 && p < partitions {
			held[m] = append(held[m], p)
		}
	}
	for _, m := range ms {
		ps := held[m]
		sort.Slice(ps, func(i, j int) bool { return heavier(consumer, ps[i], m, ps[j], m) })
		for _, p := range ps[:min(len(ps), bound)] {
			out[p] = m
			load[m]++
		}
	}
	// Fill: every free (partition, member) pair by weight, highest first.
	type pair struct {
		p int
		m string
	}
	var pairs []pair
	for p := range partitions {
		if _, ok := out[p]; ok {
			continue
		}
		for _, m := range ms {
			if load[m] < bound {
				pairs = append(pairs, pair{p, m})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return heavier(consumer, pairs[i].p, pairs[i].m, pairs[j].p, pairs[j].m) })
	for _, x := range pairs {
		if _, ok := out[x.p]; ok || load[x.m] >= bound {
			continue
		}
		out[x.p] = x.m
		load[x.m]++
	}
	return out
}

// singleOwner is the member that holds most partitions already (ties: the
// higher weight), else the member of highest weight for the consumer.
func singleOwner(consumer string, partitions int, ms []string, current map[int]string, isMember map[string]bool) string {
	count := map[string]int{}
	for p, m := range current {
		if isMember[m] && p >= 0 && p < partitions {
			count[m]++
		}
	}
	best := ""
	for _, m := range ms {
		switch {
		case best == "":
			best = m
		case count[m] > count[best]:
			best = m
		case count[m] == count[best] && weight(consumer, -1, m) > weight(consumer, -1, best):
			best = m
		}
	}
	return best
}

// heavier orders (partition, member) pairs by weight, highest first, with
// a total order on ties (partition, then member) so every instance sorts
// alike.
func heavier(consumer string, p1 int, m1 string, p2 int, m2 string) bool {
	w1, w2 := weight(consumer, p1, m1), weight(consumer, p2, m2)
	if w1 != w2 {
		return w1 > w2
	}
	if p1 != p2 {
		return p1 < p2
	}
	return m1 < m2
}

// weight is the rendezvous weight of partition p on instance m for
// consumer: FNV-1a over the three, then a 64-bit finaliser (splitmix64) so
// ids that differ in one character spread over the whole range. Fixed, not
// seeded per process: every instance must compute the same weights.
func weight(consumer string, p int, m string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(consumer))
	h.Write([]byte{0})
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(int64(p)))
	h.Write(b[:])
	h.Write([]byte{0})
	h.Write([]byte(m))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
