package cli

import (
	"bytes"
	"fmt"
	"strings"

	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter"
	"acpkit.dev/adapter/internal/normalize"
)

// A request the adapter does not implement is answered -32601 and becomes
// a malformed event (PM-4) that does not name the method. The text view
// names it, from the wire tap: an ACP method this client does not offer
// stays a malformed line, with its name; a vendor's method that lacks the
// "_" prefix ACP gives extensions (Qwen Code's craft/drainMidTurnQueue,
// which it calls between tool batches) is a runtime quirk, shown once per
// method and then no more: the -32601 is what ACP asks for, and the turn
// goes on.

// unanswered are the requests the adapter answers itself rather than by
// PM-4 (it refuses permissions, PM-1, and elicitations, PM-3).
var unanswered = map[string]bool{gen.MethodSessionRequestPermission: true, gen.MethodElicitationCreate: true}

// noteRequest queues, from a line the runtime sent, the method of a
// request the adapter will answer -32601. v.mu is held.
func (v *textView) noteRequest(line []byte) {
	// Cheap tests first: most lines are session/update notifications.
	if bytes.Contains(line, []byte(`"session/update"`)) || !bytes.Contains(line, []byte(`"method"`)) {
		return
	}
	// Members by their exact names, as acpsdk reads the envelope: a line
	// with "ID" or "METHOD" is no request the adapter answers -32601.
	id, ok := normalize.Member(line, "id")
	method, _ := normalize.StringMember(line, "method")
	if !ok || string(id) == "null" || method == "" || unanswered[method] {
		return
	}
	v.unimplemented = append(v.unimplemented, method)
}

// vendorQuirk reports whether method is a vendor's own: not ACP's, and
// without the "_" prefix of an extension.
func vendorQuirk(method string) bool {
	_, acp := gen.LookupMethod(method)
	return !acp && !strings.HasPrefix(method, "_")
}

// unimplementedEvent shows PM-4's malformed event with the method it
// answered. v.mu is held.
func (v *textView) unimplementedEvent(e adapter.Event) {
	method, ok := pop(&v.unimplemented)
	switch {
	case !ok:
		v.tagged(ansiRed, "malformed", e.Message)
	case vendorQuirk(method):
		if v.quirks[method] {
			return
		}
		if v.quirks == nil {
			v.quirks = map[string]bool{}
		}
		v.quirks[method] = true
		v.tagged(ansiDim, "quirk", fmt.Sprintf("the runtime called %s, its own method without the \"_\" prefix ACP gives extensions; "+
			"answered -32601 (method not found) as ACP says, and the turn went on (shown once)", method))
	default:
		v.tagged(ansiRed, "malformed", e.Message+": "+method)
	}
}

// isUnimplemented reports whether e is PM-4's event.
func isUnimplemented(e adapter.Event) bool {
	return e.Type == adapter.EventMalformed && e.Message == normalize.MsgUnimplementedMethod
}
