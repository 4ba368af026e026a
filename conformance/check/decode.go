package check

import (
	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// decodeInitializeResult decodes the initialize result with the SDK's
// generated decoder, as any acpsdk client would.
func decodeInitializeResult(result json.RawMessage) error {
	var r gen.InitializeResponse
	return r.UnmarshalJSON(result)
}
