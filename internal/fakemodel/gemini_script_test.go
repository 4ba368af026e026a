package fakemodel

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geminiStream reads a streamGenerateContent answer's chunks.
func geminiStream(t *testing.T, r io.Reader) []geminiChunk {
	t.Helper()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	var out []geminiChunk
	for _, line := range strings.Split(string(b), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var c geminiChunk
			require.NoError(t, json.Unmarshal([]byte(data), &c))
			out = append(out, c)
		}
	}
	return out
}

func TestGeminiScript_TextThenFunctionCallOnTheLastChunk(t *testing.T) {
	s := Start(t, func(Request) Reply {
		return Reply{Text: "one two three", ToolCall: &ToolCall{Name: "write_file", Input: `{"file_path":"/x"}`}}
	})
	res := post(t, context.Background(), s, "/v1beta/models/gemini-x:streamGenerateContent", `{"contents":[],"tools":[{"functionDeclarations":[]}]}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	chunks := geminiStream(t, res.Body)
	require.Len(t, chunks, 2)
	var text strings.Builder
	for _, c := range chunks {
		for _, p := range c.Candidates[0].Content.Parts {
			text.WriteString(p.Text)
		}
	}
	assert.Equal(t, "one two three", text.String())
	last := chunks[len(chunks)-1]
	assert.Equal(t, "STOP", last.Candidates[0].FinishReason)
	assert.NotNil(t, last.UsageMetadata)
	call := last.Candidates[0].Content.Parts[len(last.Candidates[0].Content.Parts)-1].FunctionCall
	require.NotNil(t, call)
	assert.Equal(t, "write_file", call.Name)
	assert.Equal(t, map[string]any{"file_path": "/x"}, call.Args)
	assert.Equal(t, "gemini", s.ModelRequests()[0].API)
}

// The CLI's classifiers ask for JSON: they get the router's answer, not
// the script's.
func TestGeminiScript_ClassifierGetsTheRouterAnswer(t *testing.T) {
	s := Start(t, Text("not for classifiers"))
	res := post(t, context.Background(), s, "/v1beta/models/g:generateContent", `{"contents":[],"generationConfig":{"responseMimeType":"application/json"}}`)
	var c geminiChunk
	require.NoError(t, json.NewDecoder(res.Body).Decode(&c))
	assert.Equal(t, GeminiRouterAnswer, c.Candidates[0].Content.Parts[0].Text)
}
