package acpsdk

import (
	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/internal/jsonx"
	"acpkit.dev/acpsdk/internal/surface"
)

// DecodeParams decodes the params of a request or notification into into,
// a pointer to its method's params type in the stable surface (a
// *gen.SessionNotification for session/update, a
// *gen.RequestPermissionRequest for session/request_permission, ...), for
// a consumer that gets raw messages ([OrderedFunc], a raw [Handler]).
// Params the connection read are decoded straight from the line it
// validated, without validating them again, as [Inbound.Result] decodes a
// result, and the decoded strings share the line (see the package
// documentation); so are they into any generated params type, of any
// surface. Params set or changed by the program, and any other
// destination, are validated first (json.Unmarshal). Absent params decode
// as {}, so that a missing required member is named; a failure is a
// *gen.DecodeError whose path starts with "params" ("params.update").
func (r *Request) DecodeParams(into any) error {
	if sameBytes(r.Params, r.validated) {
		if ok, err := decodeTrustedParams(r.Params, into); ok {
			return err
		}
	}
	params := []byte(r.Params)
	if len(jsonx.TrimSpace(params)) == 0 {
		params = []byte("{}")
	}
	if err := json.Unmarshal(params, into); err != nil {
		return jsonx.AtField(err, "params")
	}
	return nil
}

// decodeTrustedParams decodes params read from a validated line into into
// when into points to a generated params type, with its surface's trusted
// decoder (as the trusted dispatchers decode them): no second validation,
// no copy, no allocation but what the value holds. ok is false for any
// other destination.
func decodeTrustedParams(params []byte, into any) (ok bool, err error) {
	return surface.DecodeParams(params, into)
}
