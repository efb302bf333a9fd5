package eventstore

import "sync"

// knownVersions remembers the version each stream had after the last
// append of this store that committed, for the streams it appended to
// most recently (at most limit). A stream never loses events (no Tidemark
// operation deletes from an event table), so a remembered version is never
// ahead of the stream: an append expecting exactly it may bind its
// sequence numbers instead of having the insert read the stream's last
// one (CheckedSequence, an index probe that, on a stream appended a moment
// ago, also checks the visibility of that newest row). If another writer
// appended meanwhile, the first row collides on UNIQUE (aggregate_id,
// sequence_no) and the batch takes the read path, which reports the
// conflict with the version it reads.
type knownVersions struct {
	mu    sync.Mutex
	limit int
	m     map[knownKey]int64
}

// knownKey is a stream's storage identity and its type: a version is only
// trusted for the type that appended it (an id of another type in a shared
// table is another stream, refused as AggregateIDTakenError).
type knownKey struct {
	key
	typ string
}

// defaultKnownStreams bounds the streams a store remembers.
const defaultKnownStreams = 4096

func newKnownVersions(limit int) *knownVersions {
	return &knownVersions{limit: limit, m: make(map[knownKey]int64)}
}

// is tells whether k is remembered at version v.
func (kv *knownVersions) is(k knownKey, v int64) bool {
	if kv == nil || v < 0 {
		return false
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	got, ok := kv.m[k]
	return ok && got == v
}

// set remembers the versions of an append that committed.
func (kv *knownVersions) set(vs map[knownKey]int64) {
	if kv == nil || kv.limit <= 0 {
		return
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	for k, v := range vs {
		if _, ok := kv.m[k]; !ok && len(kv.m) >= kv.limit {
			for old := range kv.m { // any one: map order is random
				delete(kv.m, old)
				break
			}
		}
		kv.m[k] = v
	}
}

// forget drops streams whose remembered version an append found stale.
func (kv *knownVersions) forget(ks map[knownKey]int64) {
	if kv == nil {
		return
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	for k := range ks {
		delete(kv.m, k)
	}
}
