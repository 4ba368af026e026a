module acpkit.dev/tools/gen

go 1.26.0

require (
	github.com/atombender/go-jsonschema v0.24.1
	github.com/dave/jennifer v1.7.1
	go.uber.org/goleak v1.3.0
)

require (
	dario.cat/mergo v1.0.2 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
)
