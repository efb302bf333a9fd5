// Package plugin is the transport between the Tidemark host and a dialect
// plugin process: hashicorp/go-plugin over gRPC.
//
// A plugin's main calls Serve; a host calls Load (discovery, SHA-256
// pinning, contract-version negotiation, one Describe) or InProcess for a
// dialect linked into the host. What crosses the wire is the contract of
// package dialect (core/dialect), which does not import this package: the
// event store, the consumer and the engine link no gRPC.
package plugin
