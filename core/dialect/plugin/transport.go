package plugin

// The wire transport between host and plugin: hashicorp/go-plugin over gRPC.
//
// # Why a hand-written service and JSON inside BytesValue
//
// There is no protoc (nor buf) in this project's toolchain, and the contract
// is not a set of protobuf messages anyway: it is the versioned JSON document
// described by DescribeRequest / DescribeResponse (Catalogue is plain,
// JSON-tagged Go data). So the gRPC service tidemark.dialect.v1.Dialect is
// declared here by hand as a grpc.ServiceDesc with one unary method,
// Describe, whose request and response are google.protobuf.BytesValue
// (a well-known type, compiled into google.golang.org/protobuf) carrying the
// JSON encoding of DescribeRequest and DescribeResponse. The proto equivalent
// is:
//
//	syntax = "proto3";
//	package tidemark.dialect.v1;
//	import "google/protobuf/wrappers.proto";
//	service Dialect {
//	  rpc Describe(google.protobuf.BytesValue) returns (google.protobuf.BytesValue);
//	}
//
// Protobuf and gRPC stay inside this package: plugin authors and the core see
// only the Dialect interface, Serve and Load. Compatibility is governed by
// ContractVersion (negotiated by go-plugin's versioned plugin sets), not by
// protobuf field numbers.

import (
	"context"
	"encoding/json"
	"fmt"

	goplugin "github.com/hashicorp/go-plugin"
	"github.com/tidemarkdb/tidemark/core/dialect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const (
	// grpcServiceName is the fully qualified gRPC service name.
	grpcServiceName = "tidemark.dialect.v1.Dialect"
	// describeMethod is the full method name of Describe.
	describeMethod = "/" + grpcServiceName + "/Describe"
	// pluginName is the key of the dialect in go-plugin's plugin set.
	pluginName = "dialect"
	// magicCookieKey and magicCookieValue are go-plugin's handshake cookie.
	// They are not a security measure; they only stop a plugin binary run by
	// hand from waiting forever for a host.
	magicCookieKey   = "TIDEMARK_DIALECT_PLUGIN"
	magicCookieValue = "7f3c1e9a5b2d4c86a0e1f49b3d6c8a2e-tidemark-dialect"
)

// handshake is shared by host and plugin. ProtocolVersion is go-plugin's
// legacy, unversioned field; negotiation really happens on the keys of
// VersionedPlugins, which are contract versions (see pluginSets).
var handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   magicCookieKey,
	MagicCookieValue: magicCookieValue,
}

// pluginSets returns the versioned plugin sets for one contract version.
// impl is nil on the host side.
func pluginSets(version int, impl dialect.Dialect) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{
		version: {pluginName: &grpcPlugin{impl: impl, version: version}},
	}
}

// grpcPlugin is the go-plugin GRPCPlugin for a Dialect.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	impl    dialect.Dialect
	version int
}

var _ goplugin.GRPCPlugin = (*grpcPlugin)(nil)

// GRPCServer registers the Dialect service (plugin side).
func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&dialectServiceDesc, &grpcServer{impl: p.impl, version: p.version})
	return nil
}

// GRPCClient returns the host side's Dialect stub.
func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &grpcClient{conn: c}, nil
}

// dialectService is the handler type of the service description.
type dialectService interface {
	Describe(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error)
}

// dialectServiceDesc is what protoc-gen-go-grpc would have generated.
var dialectServiceDesc = grpc.ServiceDesc{
	ServiceName: grpcServiceName,
	HandlerType: (*dialectService)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Describe",
		Handler:    describeHandler,
	}},
	Streams:  []grpc.StreamDesc{},
	Metadata: "tidemark/dialect/v1/dialect.proto",
}

func describeHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.BytesValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(dialectService).Describe(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: describeMethod}
	handler := func(ctx context.Context, req any) (any, error) {
		return srv.(dialectService).Describe(ctx, req.(*wrapperspb.BytesValue))
	}
	return interceptor(ctx, in, info, handler)
}

// grpcServer adapts a Dialect to the gRPC service (plugin side).
type grpcServer struct {
	impl    dialect.Dialect
	version int
}

// Describe decodes the JSON request, calls the dialect and encodes its answer.
func (s *grpcServer) Describe(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	out, err := describeJSON(ctx, s.impl, s.version, in.GetValue())
	if err != nil {
		return nil, status.Error(codes.Unknown, err.Error())
	}
	return wrapperspb.Bytes(out), nil
}

// describeJSON is the plugin half of Describe on JSON documents; the
// in-process path runs it too, so both see exactly what crosses the wire.
// A catalogue that leaves Identity.ContractVersion at zero is stamped with
// the version the plugin was built with (which is what the field means).
func describeJSON(ctx context.Context, d dialect.Dialect, version int, in []byte) ([]byte, error) {
	var req dialect.DescribeRequest
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, fmt.Errorf("decode DescribeRequest: %w", err)
	}
	resp, err := d.Describe(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.Catalogue.Identity.ContractVersion == 0 {
		resp.Catalogue.Identity.ContractVersion = version
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encode DescribeResponse: %w", err)
	}
	return out, nil
}

// decodeDescribeResponse is the host half of describeJSON.
func decodeDescribeResponse(b []byte) (dialect.DescribeResponse, error) {
	var resp dialect.DescribeResponse
	if err := json.Unmarshal(b, &resp); err != nil {
		return dialect.DescribeResponse{}, fmt.Errorf("decode DescribeResponse: %w", err)
	}
	return resp, nil
}

// grpcClient is the host side's Dialect over gRPC.
type grpcClient struct {
	conn *grpc.ClientConn
}

var _ dialect.Dialect = (*grpcClient)(nil)

// Describe calls the plugin.
func (c *grpcClient) Describe(ctx context.Context, req dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return dialect.DescribeResponse{}, fmt.Errorf("encode DescribeRequest: %w", err)
	}
	out := new(wrapperspb.BytesValue)
	if err := c.conn.Invoke(ctx, describeMethod, wrapperspb.Bytes(in), out); err != nil {
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unknown {
			return dialect.DescribeResponse{}, fmt.Errorf("plugin Describe failed: %s", st.Message())
		}
		return dialect.DescribeResponse{}, fmt.Errorf("plugin Describe: %w", err)
	}
	return decodeDescribeResponse(out.GetValue())
}
