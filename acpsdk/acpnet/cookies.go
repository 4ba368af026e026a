package acpnet

import (
	"net/http"
	"strings"
	"sync"
)

// cookieStore keeps the cookies a server sets, by name, and sends them
// back for the life of one connection (TR-11): affinity for a load
// balancer, never authentication. As in the TypeScript SDK, domain, path
// and expiry are not considered: the store talks to one endpoint, and is
// dropped with the connection.
type cookieStore struct {
	mu    sync.Mutex
	names []string // in the order first set
	value map[string]string
}

// keep stores the cookies of a response's Set-Cookie headers.
func (s *cookieStore) keep(h http.Header) {
	lines := h.Values("Set-Cookie")
	if len(lines) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range lines {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			continue
		}
		if s.value == nil {
			s.value = make(map[string]string)
		}
		if _, ok := s.value[c.Name]; !ok {
			s.names = append(s.names, c.Name)
		}
		s.value[c.Name] = c.Value
	}
}

// apply puts the stored cookies on req; a cookie the caller set in req
// already wins.
func (s *cookieStore) apply(req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.names) == 0 {
		return
	}
	own := make(map[string]bool)
	for _, c := range req.Cookies() {
		own[c.Name] = true
	}
	var b strings.Builder
	b.WriteString(req.Header.Get("Cookie"))
	for _, name := range s.names {
		if own[name] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(name + "=" + s.value[name])
	}
	req.Header.Set("Cookie", b.String())
}

// clear forgets every cookie.
func (s *cookieStore) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names, s.value = nil, nil
}
