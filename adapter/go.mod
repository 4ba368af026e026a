module acpkit.dev/adapter

go 1.26.0

require (
	acpkit.dev v0.1.0
	github.com/creack/pty v1.1.24
	github.com/segmentio/encoding v0.5.4
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
