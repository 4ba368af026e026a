package acpnet

import (
	"fmt"
	"net"
)

// Listen listens for TCP connections on addr (host:port; port 0 picks a
// free one) for a server of this package to serve. An address without a
// host (":8080") listens on loopback (127.0.0.1), not on every interface
// as net.Listen would: an agent is reachable from elsewhere only when the
// address says so ("0.0.0.0:8080", "[::]:8080" or a host's own address),
// as TR-17 asks.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("acpnet: listen address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("acpnet: %w", err)
	}
	return ln, nil
}
