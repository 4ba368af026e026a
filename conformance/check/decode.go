package check

import (
	"fmt"

	"github.com/segmentio/encoding/json"
)

// decodeInitializeResult decodes the initialize result the way a client
// must: protocolVersion is required and a uint16.
func decodeInitializeResult(result json.RawMessage) error {
	var r struct {
		ProtocolVersion *uint16 `json:"protocolVersion"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return err
	}
	if r.ProtocolVersion == nil {
		return fmt.Errorf("protocolVersion is missing")
	}
	return nil
}
