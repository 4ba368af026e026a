package cli

// demoFlags are appended to the reference agent's command line by --demo.
const demoFlags = ""

// demoPrompts are the turns --demo runs against the reference agent.
var demoPrompts = []string{"demo"}
