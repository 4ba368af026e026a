package acpnet

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// DialOptions configure the client transports. The zero value gives the
// defaults.
type DialOptions struct {
	// Header is sent with every HTTP request and with the WebSocket
	// upgrade: credentials (Authorization) go here. Cookies the server
	// sets are added for the connection's life (TR-11).
	Header http.Header
	// HTTPClient makes the requests. By default an HTTPStream has a
	// client of its own, whose connections its Close closes; its
	// transport keeps several connections per host, since event streams
	// hold theirs, and speaks HTTP/2 where TLS negotiates it (TR-12). A
	// client given here stays the caller's, idle connections included.
	HTTPClient *http.Client
	// Subprotocols are offered on the WebSocket upgrade (none by default;
	// none is required, TR-13).
	Subprotocols []string
	// MaxMessageBytes bounds one inbound message: an event's data, a
	// WebSocket message, the initialize response (default 16 MiB). A
	// longer one ends the connection with ErrMessageTooLarge.
	MaxMessageBytes int
	// Logger receives the transport's records; nil discards them.
	Logger *slog.Logger
}

func (o *DialOptions) withDefaults() DialOptions {
	var v DialOptions
	if o != nil {
		v = *o
	}
	if v.MaxMessageBytes <= 0 {
		v.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if v.Logger == nil {
		v.Logger = slog.New(slog.DiscardHandler)
	}
	return v
}

// newHTTPClient returns an HTTPStream's own client. Its transport keeps
// more idle connections per host than net/http's default two: each open
// event stream holds one, and POSTs need others.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// Dial connects to an agent served at rawURL and returns the stream to
// hand to acpsdk.NewClientSide (as both its reader and its writer), as a
// subprocess's pipes would be: http:// and https:// speak Streamable HTTP
// (see [NewHTTPStream]), ws:// and wss:// WebSocket ([DialWebSocket]),
// tcp://host:port newline-delimited JSON over TCP ([DialTCP]). opts may be
// nil; only the WebSocket and TCP dials do I/O before the first message.
func Dial(ctx context.Context, rawURL string, opts *DialOptions) (io.ReadWriteCloser, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("acpnet: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return NewHTTPStream(rawURL, opts)
	case "ws", "wss":
		return DialWebSocket(ctx, rawURL, opts)
	case "tcp":
		if u.Host == "" {
			return nil, fmt.Errorf("acpnet: %q names no host:port", rawURL)
		}
		return DialTCP(ctx, u.Host)
	default:
		return nil, fmt.Errorf("acpnet: unsupported scheme %q in %q (want http, https, ws, wss or tcp)", u.Scheme, rawURL)
	}
}

// DialTCP connects to an agent serving newline-delimited JSON on a TCP
// socket, as `copilot --acp --port N` does (TR-16). The connection is the
// stream: acpsdk.NewClientSide(conn, conn, impl, opts).
func DialTCP(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("acpnet: %w", err)
	}
	return conn, nil
}
