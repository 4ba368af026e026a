package acpsdk

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// Standard JSON-RPC and ACP error codes: the schema's ErrorCode values
// (gen.ErrorCode), as the int64 an [Error] carries. Any other integer is
// valid on the wire too and round-trips through [Error] unchanged.
const (
	CodeParseError       = int64(gen.ErrorCodeParseError)
	CodeInvalidRequest   = int64(gen.ErrorCodeInvalidRequest)
	CodeMethodNotFound   = int64(gen.ErrorCodeMethodNotFound)
	CodeInvalidParams    = int64(gen.ErrorCodeInvalidParams)
	CodeInternalError    = int64(gen.ErrorCodeInternalError)
	CodeRequestCancelled = int64(gen.ErrorCodeRequestCancelled)
	CodeAuthRequired     = int64(gen.ErrorCodeAuthenticationRequired)
	CodeResourceNotFound = int64(gen.ErrorCodeResourceNotFound)
)

// Error is a JSON-RPC error object as carried on the wire. A call answered
// with an error returns an *Error; a handler returning an *Error (or an error
// wrapping one) sends it unchanged.
//
// Two Errors match under errors.Is when their codes are equal, so
// errors.Is(err, ErrMethodNotFound) holds for every -32601 whatever its
// message.
type Error struct {
	// Code is the JSON-RPC error code.
	Code int64 `json:"code"`
	// Message is the short description the peer sent.
	Message string `json:"message"`
	// Data is the optional structured detail, kept as raw JSON.
	Data json.RawMessage `json:"data,omitempty"`

	// cause is the local error this one was made from (e.g. the
	// *gen.DecodeError behind a -32602); it never goes on the wire.
	cause error
}

// Sentinels for the standard codes, for use with errors.Is and as ready-made
// handler answers.
var (
	ErrParse            = &Error{Code: CodeParseError, Message: "parse error"}
	ErrInvalidRequest   = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound   = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams    = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal         = &Error{Code: CodeInternalError, Message: "internal error"}
	ErrRequestCancelled = &Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	ErrAuthRequired     = &Error{Code: CodeAuthRequired, Message: "authentication required"}
	ErrResourceNotFound = &Error{Code: CodeResourceNotFound, Message: "resource not found"}
)

// Error formats the code and message.
func (e *Error) Error() string {
	return "jsonrpc error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

// Unwrap returns the local cause of an Error built by this package from
// another error (for example the *gen.DecodeError behind a -32602 answer,
// as seen by Observer.NotificationFailed); nil for errors from the wire.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// Connection-level failure kinds, matched with errors.Is against a
// [*ConnError].
var (
	// ErrClosed means the connection ended: Close was called, or the
	// inbound stream ended or failed.
	ErrClosed = errors.New("acpsdk: connection closed")
	// ErrWriteFailed means a message could not be written to the peer. The
	// connection keeps reading until its inbound stream ends, so answers
	// to earlier calls can still arrive.
	ErrWriteFailed = errors.New("acpsdk: write failed")
	// ErrMalformedResponse means the peer answered a call with a response
	// whose error member is not a JSON-RPC error object, or whose result or
	// error nests deeper than the decoders accept.
	ErrMalformedResponse = errors.New("acpsdk: malformed response")
)

// ConnError reports why a message could not be exchanged. Op says which side
// of the connection failed ("read", "write" or "close"); Err is the cause
// from the underlying stream, if any. errors.Is matches ErrWriteFailed for
// Op "write" and ErrClosed otherwise.
type ConnError struct {
	// Op is "read" (inbound stream ended or failed), "write" (a write
	// failed) or "close" (Close was called).
	Op string
	// Err is the underlying cause, e.g. io.EOF; nil after Close.
	Err error
}

// Error describes the failure.
func (e *ConnError) Error() string {
	switch {
	case e.Op == "close":
		return ErrClosed.Error()
	case e.Op == "write":
		return fmt.Sprintf("%v: %v", ErrWriteFailed, e.Err)
	default:
		return fmt.Sprintf("%v: %s: %v", ErrClosed, e.Op, e.Err)
	}
}

// Unwrap returns the underlying cause.
func (e *ConnError) Unwrap() error { return e.Err }

// Is matches the kind sentinels ErrClosed and ErrWriteFailed.
func (e *ConnError) Is(target error) bool {
	if e.Op == "write" {
		return target == ErrWriteFailed
	}
	return target == ErrClosed
}

// OversizeError describes an inbound line longer than the connection's line
// bound. The line was skipped; the connection keeps running.
type OversizeError struct {
	// Size is the length of the skipped line in bytes, without its newline.
	Size int64
	// Limit is the bound it exceeded.
	Limit int
}

// Error describes the skipped line.
func (e *OversizeError) Error() string {
	return fmt.Sprintf("acpsdk: skipped a %d-byte line over the %d-byte line bound", e.Size, e.Limit)
}
