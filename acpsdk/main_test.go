package acpsdk

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// agentEnv makes the test binary act as an agent subprocess (for the
// StartAgent/StartCommand tests).
const agentEnv = "ACPSDK_TEST_AS_AGENT"

func TestMain(m *testing.M) {
	switch os.Getenv(agentEnv) {
	case "1":
		runAsAgent()
		return
	case "spawn", "hold":
		os.Exit(runDescendantHelper(os.Getenv(agentEnv)))
	}
	goleak.VerifyTestMain(m)
}

// runAsAgent serves a minimal agent on stdin/stdout until stdin ends.
func runAsAgent() {
	a := NewAgentSide(os.Stdin, os.Stdout, &minimalAgent{init: `{"protocolVersion":1,"agentInfo":{"name":"subprocess","version":"1"}}`}, nil)
	<-a.Done()
	_ = a.Conn().Flush(context.Background())
	_ = a.Close()
}
