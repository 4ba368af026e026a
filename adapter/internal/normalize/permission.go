package normalize

import "acpkit.dev/acpsdk/gen"

// PermissionOption is the part of a permission option the selection reads.
type PermissionOption struct {
	OptionID string
	Kind     gen.PermissionOptionKind
}

// SelectRefusal picks the option a refusing answer selects (PM-1): the
// first reject_once in sent order, else the first reject_always. Ids and
// names are never interpreted and allow_* is never chosen. It returns false
// when no refusing option exists, which ends the attempt (PM-2).
func SelectRefusal(opts []PermissionOption) (string, bool) {
	for _, o := range opts {
		if o.Kind == gen.PermissionOptionKindRejectOnce {
			return o.OptionID, true
		}
	}
	for _, o := range opts {
		if o.Kind == gen.PermissionOptionKindRejectAlways {
			return o.OptionID, true
		}
	}
	return "", false
}
