package mcpconfig

// Wire is one rendered server, ready to be encoded into the mcpServers
// array of session/new, session/load or session/resume: a StdioServer or
// an HTTPServer. Encode it with either JSON package.
type Wire interface{ isWire() }

// StdioServer is the MCP-7 stdio shape: no type member; args and env are
// always arrays.
type StdioServer struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []Pair   `json:"env"`
}

// HTTPServer is the MCP-8 HTTP shape, used for every URL-addressed server;
// Type is always "http".
type HTTPServer struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	URL     string `json:"url"`
	Headers []Pair `json:"headers"`
}

func (StdioServer) isWire() {}
func (HTTPServer) isWire()  {}

// nonNil keeps an absent list encoding as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Render re-expresses servers in the wire shape, in the given (name)
// order. Stdio servers are always rendered (MCP-7, MCP-10). URL-addressed
// servers, of any declared type, render as the HTTP variant (MCP-8; the
// SSE variant is never produced) and only when httpSupported, which the
// caller sets from agentCapabilities.mcpCapabilities.http being exactly
// true (MCP-9); withheld reports that some were left out, so the caller
// can log and lower the tool-servers capability. The result is never nil,
// so it encodes as [] (MCP-11). Nothing is added that the file did not
// say: there is no trust or approval member on the wire (MCP-13).
func Render(servers []Server, httpSupported bool) (wire []Wire, withheld bool) {
	wire = make([]Wire, 0, len(servers))
	for _, s := range servers {
		if !s.HTTP() {
			wire = append(wire, StdioServer{Name: s.Name, Command: s.Command, Args: nonNil(s.Args), Env: nonNil(s.Env)})
			continue
		}
		if !httpSupported {
			withheld = true
			continue
		}
		wire = append(wire, HTTPServer{Type: "http", Name: s.Name, URL: s.URL, Headers: nonNil(s.Headers)})
	}
	return wire, withheld
}
