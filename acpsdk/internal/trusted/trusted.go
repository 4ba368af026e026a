// Package trusted carries the generated dispatchers' and result decoder's
// trusted entry points from package gen to package acpsdk without exporting
// them to users.
//
// acpsdk.Conn validates every inbound line as a whole before it dispatches
// a message, so decoding the params again through the public
// gen.DispatchAgent / gen.DispatchClient would validate the same bytes
// twice. The trusted dispatchers skip that second pass; they must only be
// given params that come out of a validated line. Result does the same for
// the result member of a response.
package trusted

import "context"

// Dispatcher is a generated trusted dispatcher for the handler interface I
// (gen.Agent or gen.Client).
type Dispatcher[I any] func(ctx context.Context, impl I, method string, params []byte) (any, error)

// Agent and Client are set by package gen's init to its trusted
// dispatchers, a Dispatcher[gen.Agent] and a Dispatcher[gen.Client]. They
// are typed any because this package cannot import gen (gen imports it).
var Agent, Client any

// Result is set by package gen's init: it decodes a response's result,
// taken from a validated line, into into when into points to a method's
// generated result type, and reports ok false for any other destination.
var Result func(data []byte, into any) (ok bool, err error)
