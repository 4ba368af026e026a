package cli

// demoPrompts are the turns --demo runs against the reference agent. The
// reference agent acts on the words it finds in a prompt (see its package
// doc): "full" streams two messages, a thought, a plan and tool calls of
// several kinds, "permission" asks for a permission the adapter refuses, and
// "text" streams a reply. The capability-gap notice needs no word: the
// reference agent has no measurement source, so token counts are a gap.
var demoPrompts = []string{
	"Walk through the repository and show your work: full permission",
	"Now summarise what you found in plain text.",
}
