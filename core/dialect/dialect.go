// Package dialect is the contract between the Tidemark core and a database
// dialect plugin.
//
// A dialect describes; the core executes. A plugin never touches a database:
// at load the core asks it once for its whole Catalogue (identity, DDL,
// statements, lock forms, error rules, introspection queries), caches it, and
// from then on runs every statement itself on the user's *sql.DB or *sql.Tx.
// The plugin process may be stopped right after loading; the hot path makes
// no plugin call.
//
// Plugin authors implement Dialect (usually by embedding Base and overriding
// what differs from ANSI SQL) and call plugin.Serve (package
// core/dialect/plugin) from a two-line main. The transport (hashicorp/go-plugin
// over gRPC) lives in that package, not here, so the packages of the hot path
// that import this contract link no gRPC.
package dialect

import (
	"context"
	"fmt"
	"strconv"
)

// ContractVersion is the version of the catalogue format this package speaks.
// It is negotiated through go-plugin's versioned plugin sets, so a host and a
// plugin built against different contract versions refuse each other at load
// with a clear error instead of misreading the catalogue.
//
// 2: event.stream_version returns (sequence_no, aggregate_type) of the id's
// last row, no row for an empty stream (was MAX(sequence_no)).
//
// 3: the position settings in one struct, position_settings (was
// allocated_in_result, locks.counter_first, event_insert.returns_positions,
// the last now implied by the strategy), with a counter lock form
// (position.lock); event_insert.max_rows; isolation per operation;
// locks.begin_write removed (nothing ran it); every template checked at
// load against its statement's spec.
//
// 4: capture_insert, the capture topic's publish as a multi-row insert
// (as event_insert), replacing the statements topic.insert and
// topic.insert_drawn.
//
// 5: read_model_insert, the read-model topics' publish (a RowInsert like
// capture_insert), and the rmtopic.* statements.
const ContractVersion = 5

// Dialect is what a plugin author implements. Every method has the shape
// (ctx, Request) (Response, error) so the contract can grow by adding fields
// to requests and responses without breaking existing plugins.
type Dialect interface {
	// Describe returns the complete catalogue. The core calls it once at load
	// and never again; it must be deterministic and must not need a database.
	Describe(ctx context.Context, req DescribeRequest) (DescribeResponse, error)
}

// DescribeRequest is sent by the host at load.
type DescribeRequest struct {
	// HostContractVersion is the ContractVersion the host was built with.
	HostContractVersion int `json:"host_contract_version"`
}

// DescribeResponse carries the catalogue.
type DescribeResponse struct {
	Catalogue Catalogue `json:"catalogue"`
}

// ContractVersionError reports a plugin built against another contract
// version than the host's.
type ContractVersionError struct {
	Path   string
	Host   int // ContractVersion of this host
	Plugin int // the plugin's version (0 if it could not be told)
}

// Error names both versions.
func (e *ContractVersionError) Error() string {
	pv := "another version"
	if e.Plugin != 0 {
		pv = "version " + strconv.Itoa(e.Plugin)
	}
	return fmt.Sprintf("dialect plugin %s: contract version mismatch: the plugin speaks %s, this host speaks version %d; use a plugin built for this release",
		e.Path, pv, e.Host)
}
