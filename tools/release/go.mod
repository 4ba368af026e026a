module acpkit.dev/tools/release

go 1.26.0
