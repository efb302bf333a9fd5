package lease

import (
	"errors"
	"fmt"
)

// Errors callers branch on with errors.Is; the typed errors below wrap them.
var (
	// ErrInvalid: a consumer, partition, claim or option refused before any
	// SQL runs.
	ErrInvalid = errors.New("invalid lease argument")
	// ErrLeaseLost: the partition's lease is no longer held under the
	// generation claimed (taken over, handed back or released); the apply's
	// transaction must roll back.
	ErrLeaseLost = errors.New("partition lease lost")
	// ErrStopped: the coordinator was stopped.
	ErrStopped = errors.New("lease coordinator stopped")
)

// InvalidError says which argument was refused and why.
type InvalidError struct {
	Field  string // e.g. "consumer type", "partitions", "heartbeat interval"
	Value  any
	Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("lease: %s %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// LostError is a fence that found the lease held by another instance or
// under another generation.
type LostError struct {
	Claim Claim
	// Owner and Generation are what the ownership row holds now; Owner is
	// empty when the lease is free, Generation 0 when there is no row.
	Owner      string
	Generation int64
}

func (e *LostError) Error() string {
	owner := e.Owner
	if owner == "" {
		owner = "nobody"
	}
	return fmt.Sprintf("lease of %s/%s partition %d lost: claimed by %s at generation %d, now held by %s at generation %d",
		e.Claim.ConsumerType, e.Claim.ConsumerName, e.Claim.Partition, e.Claim.InstanceID, e.Claim.Generation, owner, e.Generation)
}

// Unwrap makes errors.Is(err, ErrLeaseLost) hold.
func (e *LostError) Unwrap() error { return ErrLeaseLost }

// maxTypeLength and maxNameLength are the spec's column widths:
// consumer_type VARCHAR(32), consumer_name and instance_id VARCHAR(255).
const (
	maxTypeLength  = 32
	maxNameLength  = 255
	maxPartitionNo = 32767 // partition_no SMALLINT
)

// checkConsumer refuses a consumer the tables cannot hold.
func checkConsumer(typ, name string) error {
	switch {
	case typ == "":
		return &InvalidError{Field: "consumer type", Value: `""`, Reason: "must not be empty"}
	case len(typ) > maxTypeLength:
		return &InvalidError{Field: "consumer type", Value: typ, Reason: fmt.Sprintf("longer than %d bytes (consumer_type VARCHAR(32))", maxTypeLength)}
	case name == "":
		return &InvalidError{Field: "consumer name", Value: `""`, Reason: "must not be empty"}
	case len(name) > maxNameLength:
		return &InvalidError{Field: "consumer name", Value: name, Reason: fmt.Sprintf("longer than %d bytes (consumer_name VARCHAR(255))", maxNameLength)}
	}
	return nil
}
