package refagent

import (
	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// acceptContent refuses, with -32602, a prompt block the agent does not
// serve: image, audio and resource blocks it does not advertise. Text and
// resource_link blocks every agent must accept.
func (a *Agent) acceptContent(blocks []gen.ContentBlock) error {
	for i, b := range blocks {
		var kind string
		var advertised bool
		switch b.(type) {
		case *gen.ContentBlockResourceLink:
			if a.opts.RefuseResourceLink {
				return errorf(acpsdk.CodeInvalidParams, "prompt[%d]: resource_link blocks are refused (--refuse-resource-link)", i)
			}
			continue
		case *gen.ContentBlockImage:
			kind, advertised = "image", a.opts.PromptImage
		case *gen.ContentBlockAudio:
			kind, advertised = "audio", a.opts.PromptAudio
		case *gen.ContentBlockResource:
			kind, advertised = "resource", a.opts.PromptEmbedded
		default:
			continue
		}
		switch {
		case advertised && a.opts.RefuseAdvertisedContent:
			return errorf(acpsdk.CodeInvalidParams, "prompt[%d]: %s blocks are refused (--refuse-advertised-content)", i, kind)
		case !advertised && !a.opts.AcceptUnadvertisedContent:
			return errorf(acpsdk.CodeInvalidParams, "prompt[%d]: %s blocks are not supported (not advertised in promptCapabilities)", i, kind)
		}
	}
	return nil
}
