// Package surface carries one generated protocol surface (a package such
// as acpkit.dev/acpsdk/gen, generated from one schema) to acpsdk's generic
// client and agent sides.
//
// Each generated package fills in a [Spec] and exports the [Surface] made
// from it. The Surface is opaque outside this package: a user passes it to
// acpsdk.NewClientSideOf or acpsdk.NewAgentSideOf and can neither read nor
// build one, so the trusted entry points it holds (dispatch and result
// decoding that skip validating bytes the connection already validated)
// reach acpsdk without being exported to users.
package surface

import (
	"context"
	"sync"
	"sync/atomic"
)

// Caller is what the generated typed peers need from a connection. Every
// generated package declares its own Caller with these two methods, so a
// value of this type is one of them.
type Caller interface {
	// Call sends a request and decodes its result into result (a pointer).
	Call(ctx context.Context, method string, params, result any) error
	// Notify sends a notification.
	Notify(ctx context.Context, method string, params any) error
}

// Dispatcher is a generated trusted dispatcher for the handler interface I
// (the package's Agent or Client): it must only be given params that come
// out of a line the connection validated.
type Dispatcher[I any] func(ctx context.Context, impl I, method string, params []byte) (any, error)

// Spec is what a generated package says about itself. A is its Agent
// handler interface, C its Client handler interface, AP and CP its
// *AgentPeer and *ClientPeer.
type Spec[A, C, AP, CP any] struct {
	// Schema is the schema file the package was generated from, relative
	// to the repository root ("schema/v1/schema.unstable.json"); acpsdk
	// keys its strict-mode rules by it.
	Schema string
	// NotImplemented is the package's ErrNotImplemented.
	NotImplemented error
	// DispatchAgent and DispatchClient are the trusted dispatchers.
	DispatchAgent  Dispatcher[A]
	DispatchClient Dispatcher[C]
	// NewAgentPeer and NewClientPeer wrap a connection in the typed peers.
	NewAgentPeer  func(Caller) AP
	NewClientPeer func(Caller) CP
	// NewParams and NewResult return a pointer to a new params or result
	// value of a method (its generated type, whose UnmarshalJSON is the
	// user's decode; raw JSON for a result that is a union), or nil for a
	// method the schema lacks.
	NewParams func(method string) any
	NewResult func(method string) any
	// Result decodes a response's result, taken from a validated line, into
	// into when into points to one of the package's result types; ok is
	// false for any other destination.
	Result func(data []byte, into any) (ok bool, err error)
	// Params decodes a request's or notification's params, taken from a
	// validated line, into into when into points to one of the package's
	// params types; ok is false for any other destination.
	Params func(data []byte, into any) (ok bool, err error)
}

// Surface is a generated package's [Spec], opaque to users.
type Surface[A, C, AP, CP any] struct {
	spec Spec[A, C, AP, CP]
}

// New makes the Surface a generated package exports, and registers its
// trusted result and params decoders (see [DecodeResult], [DecodeParams]).
// It is called from package initialization only.
func New[A, C, AP, CP any](spec Spec[A, C, AP, CP]) *Surface[A, C, AP, CP] {
	register(&results, spec.Result)
	register(&params, spec.Params)
	return &Surface[A, C, AP, CP]{spec: spec}
}

// register adds a surface's trusted decoder to list.
func register(list *atomic.Pointer[[]decoder], d decoder) {
	if d == nil {
		return
	}
	mu.Lock()
	ds := append(append([]decoder{}, *list.Load()...), d)
	list.Store(&ds)
	mu.Unlock()
}

// Schema names the schema file the surface was generated from.
func (s *Surface[A, C, AP, CP]) Schema() string { return s.spec.Schema }

// SpecOf returns what s was made from; only acpsdk (inside the module's
// internal tree) can call it.
func SpecOf[A, C, AP, CP any](s *Surface[A, C, AP, CP]) *Spec[A, C, AP, CP] { return &s.spec }

// decoder is a surface's trusted result or params decoder.
type decoder = func(data []byte, into any) (ok bool, err error)

// results and params hold every surface's trusted result and params
// decoders; they are read on every message decoded, so without a lock.
var (
	mu      sync.Mutex
	results atomic.Pointer[[]decoder]
	params  atomic.Pointer[[]decoder]
)

func init() {
	results.Store(&[]decoder{})
	params.Store(&[]decoder{})
}

// DecodeResult decodes a validated result with the trusted decoder of
// whichever surface owns into's type; ok is false when none does.
func DecodeResult(data []byte, into any) (ok bool, err error) {
	return decode(&results, data, into)
}

// DecodeParams decodes validated params with the trusted decoder of
// whichever surface owns into's type; ok is false when none does. Absent or
// null params decode as {}, and errors carry the path "params…", as the
// trusted dispatchers decode them.
func DecodeParams(data []byte, into any) (ok bool, err error) {
	return decode(&params, data, into)
}

func decode(list *atomic.Pointer[[]decoder], data []byte, into any) (ok bool, err error) {
	for _, d := range *list.Load() {
		if ok, err := d(data, into); ok {
			return true, err
		}
	}
	return false, nil
}
