// Package browsertest opens acpcheck's HTML report in headless Chromium
// (Debian's chromium, driven by github.com/chromedp/chromedp) and checks
// what a person sees there: the verdict, the failing rows, a transcript
// shown and one expanded by a click.
//
// It is a module of its own, in go.work, so that chromedp never enters
// acpkit.dev's go.mod. Its tests build on Linux alone, where make deps
// installs the browser: the cross-platform vet and staticcheck of make
// test then never compile chromedp's sixty generated protocol packages
// for windows and darwin.
package browsertest
