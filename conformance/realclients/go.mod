module acpkit.dev/conformance/realclients

go 1.26.0

tool github.com/coder/acp-go-sdk/example/client

require (
	acpkit.dev v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/coder/acp-go-sdk v0.13.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
