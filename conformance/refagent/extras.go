package refagent

import (
	"reflect"
	"strings"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// rejectExtras is --reject-meta and --reject-unknown-members: a request
// whose params carry _meta, or a member its params type does not define,
// is refused with -32602, as a too-strict agent does.
func (a *Agent) rejectExtras(req *acpsdk.Request) error {
	if !a.opts.RejectMeta && !a.opts.RejectUnknownMembers {
		return nil
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil {
		return nil // not an object: the typed dispatch answers that
	}
	if _, ok := params["_meta"]; ok && a.opts.RejectMeta {
		return errorf(acpsdk.CodeInvalidParams, "%s: _meta is not accepted (--reject-meta)", req.Method)
	}
	if !a.opts.RejectUnknownMembers {
		return nil
	}
	known, ok := paramMembers(req.Method)
	if !ok {
		return nil
	}
	for name := range params {
		if !known[name] {
			return errorf(acpsdk.CodeInvalidParams, "%s: unknown member %q (--reject-unknown-members)", req.Method, name)
		}
	}
	return nil
}

// paramMembers names the members of method's params type, from the
// generated struct's json tags. It reports false for a method it cannot
// tell: unknown, or with members that depend on a variant.
func paramMembers(method string) (map[string]bool, bool) {
	info, ok := gen.LookupMethod(method)
	if !ok || info.NewParams == nil {
		return nil, false
	}
	t := reflect.TypeOf(info.NewParams()).Elem()
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	known := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" && f.Type.Kind() == reflect.Interface:
			return nil, false // variant members sit beside the others
		case name != "" && name != "-":
			known[name] = true
		}
	}
	return known, true
}
