module acpkit.dev/tools/bench

go 1.26

require (
	github.com/coder/acp-go-sdk v0.13.0 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
)
