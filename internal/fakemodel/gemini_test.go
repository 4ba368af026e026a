package fakemodel

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func postGemini(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestGeminiStreamsChunksWithUsageOnTheLast(t *testing.T) {
	api, err := NewGeminiAPI(func(r GeminiRequest) GeminiReply {
		return GeminiReply{Text: "hello there", Usage: GeminiUsage{Prompt: 100, Output: 10, Cached: 5, Thoughts: 3}}
	})
	require.NoError(t, err)
	defer api.Close()
	assert.True(t, strings.HasPrefix(api.URL(), "http://127.0.0.1:"), "loopback only")

	resp := postGemini(t, api.URL()+"/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[]}]}`)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var chunks []geminiChunk
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "data: "); ok {
			var c geminiChunk
			require.NoError(t, json.Unmarshal([]byte(data), &c))
			chunks = append(chunks, c)
		}
	}
	require.Len(t, chunks, 2)
	assert.Nil(t, chunks[0].UsageMetadata)
	require.NotNil(t, chunks[1].UsageMetadata)
	assert.Equal(t, int64(113), chunks[1].UsageMetadata.Total)
	assert.Equal(t, "STOP", chunks[1].Candidates[0].FinishReason)
	assert.Equal(t, "gemini-x", chunks[1].ModelVersion)

	reqs := api.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "gemini-x", reqs[0].Model)
	assert.Equal(t, "streamGenerateContent", reqs[0].Method)
	assert.True(t, reqs[0].HasTools())
	assert.Equal(t, "hi", reqs[0].LastUserText())
	assert.False(t, reqs[0].WantsJSON())
}

func TestGeminiAnswersUtilityCallsWhole(t *testing.T) {
	api, err := NewGeminiAPI(func(r GeminiRequest) GeminiReply {
		if r.WantsJSON() {
			return GeminiReply{Text: GeminiRouterAnswer, Usage: GeminiUsage{Prompt: 50, Output: 7}}
		}
		return GeminiReply{Call: &GeminiFunctionCall{Name: "list_directory", Args: map[string]any{"dir_path": "."}}}
	})
	require.NoError(t, err)
	defer api.Close()
	resp := postGemini(t, api.URL()+"/v1beta/models/lite:generateContent", `{"generationConfig":{"responseMimeType":"application/json"}}`)
	var c geminiChunk
	body, _ := io.ReadAll(resp.Body)
	require.NoError(t, json.Unmarshal(body, &c))
	assert.Equal(t, GeminiRouterAnswer, c.Candidates[0].Content.Parts[0].Text, "the two text chunks are merged")
	assert.Equal(t, int64(57), c.UsageMetadata.Total)

	resp = postGemini(t, api.URL()+"/v1beta/models/main:generateContent", `{}`)
	body, _ = io.ReadAll(resp.Body)
	require.NoError(t, json.Unmarshal(body, &c))
	require.NotNil(t, c.Candidates[0].Content.Parts[0].FunctionCall)
	assert.Equal(t, "list_directory", c.Candidates[0].Content.Parts[0].FunctionCall.Name)
}

func TestGeminiRefusesWhatItDoesNotServe(t *testing.T) {
	api, err := NewGeminiAPI(func(GeminiRequest) GeminiReply { return GeminiReply{Status: http.StatusServiceUnavailable} })
	require.NoError(t, err)
	defer api.Close()
	assert.Equal(t, http.StatusNotFound, postGemini(t, api.URL()+"/v1beta/other", `{}`).StatusCode)
	assert.Equal(t, http.StatusBadRequest, postGemini(t, api.URL()+"/v1beta/models/m:generateContent", `{not json`).StatusCode)
	assert.Equal(t, http.StatusServiceUnavailable, postGemini(t, api.URL()+"/v1beta/models/m:generateContent", `{}`).StatusCode, "a scripted failure")
	_, err = NewGeminiAPI(nil)
	assert.Error(t, err)
}
