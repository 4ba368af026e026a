package acpnet

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed means the transport was closed (Close was called, or the
	// connection was deleted or ended).
	ErrClosed = errors.New("acpnet: transport closed")
	// ErrLimit is matched by every *LimitError.
	ErrLimit = errors.New("acpnet: limit exceeded")
	// ErrStreamEnded means the server ended the connection's event stream,
	// which it never does to a live connection (TR-10): the client treats
	// it as the end of the connection.
	ErrStreamEnded = errors.New("acpnet: the server ended the connection stream")
	// ErrSessionStreamEnded fails the requests of a session whose event
	// stream ended while they waited; the session's next message opens it
	// again (TR-10).
	ErrSessionStreamEnded = errors.New("acpnet: session stream ended")
)

// StatusError is an HTTP answer the client transport could not use: a
// status outside 2xx to one of its POST, GET or DELETE requests (TR-11),
// or a refused WebSocket upgrade.
type StatusError struct {
	// Method is the request's method: POST, GET or DELETE.
	Method string
	// StatusCode and Status are the response's, as net/http gives them
	// ("404 Not Found").
	StatusCode int
	Status     string
	// Body is the start of the response body (at most 8 KiB).
	Body string
}

// Error says which request failed how, with the body when there is one.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("acpnet: %s answered %s", e.Method, e.Status)
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// CloseError is a WebSocket close frame with a status code (TR-15): 1001
// the server is shutting down, 1002 a protocol violation, 1008 a limit was
// broken, 1011 an internal error.
type CloseError struct {
	Code   int
	Reason string
}

// Error gives the code and the reason.
func (e *CloseError) Error() string {
	return fmt.Sprintf("acpnet: websocket closed with status %d: %q", e.Code, e.Reason)
}

// LimitError names the bound a peer broke (TR-18). errors.Is matches
// ErrLimit.
type LimitError struct {
	// Limit is the option's name, e.g. "MaxBufferedBytes".
	Limit string
	// Value is the bound.
	Value int64
}

// Error names the bound.
func (e *LimitError) Error() string {
	return fmt.Sprintf("acpnet: connection exceeds %s (%d)", e.Limit, e.Value)
}

// Is matches ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }
