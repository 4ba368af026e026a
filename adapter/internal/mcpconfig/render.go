package mcpconfig

import "acpkit.dev/acpsdk/gen"

// Wire is one rendered server: the generated wire union, a
// *gen.McpServerStdio or a *gen.McpServerHTTP. Either JSON package
// encodes it in the wire shape.
type Wire = gen.McpServer

// Render re-expresses servers as the generated wire union that
// session/new, session/load and session/resume carry, in the given (name)
// order. Stdio servers are always rendered, with args and env as arrays
// (MCP-7, MCP-10). URL-addressed servers, of any declared type, render as
// the HTTP variant (MCP-8; the SSE variant is never produced) and only
// when httpSupported, which the caller sets from
// agentCapabilities.mcpCapabilities.http being exactly true (MCP-9);
// withheld reports that some were left out, so the caller can log and
// lower the tool-servers capability. The result is never nil (MCP-11).
// Nothing is added that the file did not say: the declaration has no
// trust or approval member (MCP-13).
func Render(servers []Server, httpSupported bool) (wire []Wire, withheld bool) {
	wire = make([]Wire, 0, len(servers))
	for _, s := range servers {
		if !s.HTTP() {
			env := make([]gen.EnvVariable, len(s.Env))
			for i, p := range s.Env {
				env[i] = gen.EnvVariable{Name: p.Name, Value: p.Value}
			}
			args := s.Args
			if args == nil {
				args = []string{}
			}
			wire = append(wire, &gen.McpServerStdio{Name: s.Name, Command: s.Command, Args: args, Env: env})
			continue
		}
		if !httpSupported {
			withheld = true
			continue
		}
		headers := make([]gen.HTTPHeader, len(s.Headers))
		for i, p := range s.Headers {
			headers[i] = gen.HTTPHeader{Name: p.Name, Value: p.Value}
		}
		wire = append(wire, &gen.McpServerHTTP{Name: s.Name, URL: s.URL, Headers: headers})
	}
	return wire, withheld
}
