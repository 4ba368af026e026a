module acpkit.dev/adapter

go 1.26.0

require (
	acpkit.dev v0.0.0
	github.com/segmentio/encoding v0.5.4
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
)

// The adapter is developed and released together with the SDK in this
// repository; the replace keeps a GOWORK=off build of this module working.
replace acpkit.dev => ../
